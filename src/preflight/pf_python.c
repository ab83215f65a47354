/*
 * pf_python.c - the one python3 child: what torch was built with and what
 * it really maps.
 *
 * Why: the toolkit on PATH is not what torch loads (collect_env reports the
 * former). The child imports torch (and torch_musa), reads build info,
 * device capability and SDPA flags, tries the attention / kernel packages,
 * and lists the accelerator libraries mapped in its own address space
 * after the imports (/proc/self/maps). It answers with one flat JSON object
 * {"key": string | bool | [strings]} parsed here into facts; the runner
 * that starts it enforces the timeout.
 */
#include <string.h>
#include "pf_int.h"
#include "trainscope/json.h"

const char pf_python_script[] =
	"import json, os, sys\n"
	"r = {'python.version': sys.version.split()[0],\n"
	"     'python.sitedir': [p for p in sys.path if p.endswith(('site-packages', 'dist-packages'))]}\n"
	"def s(v):\n"
	"    return None if v is None else str(v)\n"
	"def tryset(k, f):\n"
	"    try:\n"
	"        v = f()\n"
	"        if v is not None:\n"
	"            r[k] = v if isinstance(v, bool) else str(v)\n"
	"    except Exception:\n"
	"        pass\n"
	"try:\n"
	"    import torch\n"
	"    r['torch.version'] = torch.__version__\n"
	"    tryset('torch.cuda', lambda: torch.version.cuda)\n"
	"    tryset('torch.hip', lambda: getattr(torch.version, 'hip', None))\n"
	"    tryset('torch.debug', lambda: bool(torch.version.debug))\n"
	"    tryset('torch.cudnn', lambda: torch.backends.cudnn.version())\n"
	"    tryset('torch.nccl', lambda: '.'.join(map(str, torch.cuda.nccl.version())))\n"
	"    tryset('torch.matmul_allow_tf32', lambda: bool(torch.backends.cuda.matmul.allow_tf32))\n"
	"    tryset('torch.sdpa.flash', lambda: bool(torch.backends.cuda.flash_sdp_enabled()))\n"
	"    tryset('torch.sdpa.mem_efficient', lambda: bool(torch.backends.cuda.mem_efficient_sdp_enabled()))\n"
	"    tryset('torch.sdpa.math', lambda: bool(torch.backends.cuda.math_sdp_enabled()))\n"
	"    tryset('torch.sdpa.cudnn', lambda: bool(torch.backends.cuda.cudnn_sdp_enabled()))\n"
	"    tryset('cuda.available', lambda: bool(torch.cuda.is_available()))\n"
	"    if r.get('cuda.available'):\n"
	"        tryset('device.count', lambda: torch.cuda.device_count())\n"
	"        tryset('device.name', lambda: torch.cuda.get_device_name(0))\n"
	"        tryset('device.cc', lambda: '%d.%d' % torch.cuda.get_device_capability(0))\n"
	"except Exception as e:\n"
	"    r['torch.error'] = (type(e).__name__ + ': ' + str(e))[:200]\n"
	"try:\n"
	"    import torch_musa\n"
	"    import torch\n"
	"    r['torch_musa.version'] = s(getattr(torch_musa, '__version__', None)) or 'unknown'\n"
	"    tryset('torch.musa', lambda: getattr(torch.version, 'musa', None))\n"
	"    tryset('torch.mccl', lambda: '.'.join(map(str, torch.musa.mccl.version())))\n"
	"    tryset('torch.mudnn', lambda: torch.backends.mudnn.version())\n"
	"    tryset('mudnn.allow_tf32', lambda: bool(torch.backends.mudnn.allow_tf32))\n"
	"    tryset('musa.available', lambda: bool(torch.musa.is_available()))\n"
	"    if r.get('musa.available'):\n"
	"        tryset('device.count', lambda: torch.musa.device_count())\n"
	"        tryset('device.name', lambda: torch.musa.get_device_name(0))\n"
	"        tryset('device.cc', lambda: '%d.%d' % torch.musa.get_device_capability(0))\n"
	"except ImportError as e:\n"
	"    if 'torch_musa' not in str(e):\n"
	"        r['torch_musa.error'] = (type(e).__name__ + ': ' + str(e))[:200]\n"
	"except Exception as e:\n"
	"    r['torch_musa.error'] = (type(e).__name__ + ': ' + str(e))[:200]\n"
	"try:\n"
	"    from importlib.metadata import version as dist_version\n"
	"except Exception:\n"
	"    dist_version = None\n"
	"for dist, mod in (('flash-attn', 'flash_attn'), ('transformer-engine', 'transformer_engine'),\n"
	"                  ('triton', 'triton'), ('mate', 'mate'), ('deep-gemm', 'deep_gemm'),\n"
	"                  ('apex', 'apex'), ('torchada', 'torchada')):\n"
	"    inst = None\n"
	"    try:\n"
	"        inst = dist_version(dist) if dist_version else None\n"
	"    except Exception:\n"
	"        pass\n"
	"    try:\n"
	"        m = __import__(mod)\n"
	"        r['pkg.' + dist + '.version'] = s(getattr(m, '__version__', None)) or inst or 'unknown'\n"
	"        r['pkg.' + dist + '.import'] = True\n"
	"    except Exception as e:\n"
	"        if inst:\n"
	"            r['pkg.' + dist + '.version'] = inst\n"
	"            r['pkg.' + dist + '.import'] = False\n"
	"            r['pkg.' + dist + '.error'] = (type(e).__name__ + ': ' + str(e))[:160]\n"
	"keys = ('cuda', 'nccl', 'cudnn', 'cupti', 'nvidia-ml', 'musa', 'mccl', 'mudnn', 'mupti', 'mtml', 'cublas', 'mublas')\n"
	"maps = set()\n"
	"try:\n"
	"    with open('/proc/self/maps') as f:\n"
	"        for line in f:\n"
	"            p = line.split()\n"
	"            if len(p) >= 6 and '.so' in p[5] and any(k in os.path.basename(p[5]) for k in keys):\n"
	"                maps.add(p[5])\n"
	"except Exception:\n"
	"    pass\n"
	"r['python.maps'] = sorted(maps)\n"
	"print(json.dumps(r, sort_keys=True))\n";

/* Fact value of a scalar token; NULL for null and containers. */
static const char *scalar(struct ts_preflight *pf, const struct ts_json *j, int tok)
{
	switch (tok) {
	case TS_JSON_STR: {
		struct ts_sb sb;
		const char *v;
		if (!j->escaped)
			return pf_dupn(pf, j->s, j->n);
		ts_sb_init(&sb);
		ts_json_unescape(j->s, j->n, 1, &sb);
		v = sb.failed ? NULL : pf_dupn(pf, sb.buf, sb.len);
		ts_sb_release(&sb);
		return v;
	}
	case TS_JSON_NUM: return pf_dupn(pf, j->s, j->n);
	case TS_JSON_TRUE: return "true";
	case TS_JSON_FALSE: return "false";
	default: return NULL;
	}
}

int pf_python_parse(struct ts_preflight *pf, const char *data, size_t n)
{
	struct ts_json j;
	struct ts_err err;
	int tok, rc = TS_EPARSE;
	size_t keys = 0;

	/* the answer is the last line; imports may print before it */
	while (n && (data[n - 1] == '\n' || data[n - 1] == '\r'))
		n--;
	for (size_t i = n; i-- > 0;)
		if (data[i] == '\n') {
			data += i + 1;
			n -= i + 1;
			break;
		}
	ts_err_init(&err);
	ts_json_init_mem(&j, data, n, TS_JSON_LENIENT, "python3 probe");
	if (ts_json_next(&j, &err) != TS_JSON_OBJ)
		goto out;
	while ((tok = ts_json_next(&j, &err)) == TS_JSON_KEY) {
		const char *key = pf_dupn(pf, j.s, j.n > 200 ? 200 : j.n);
		if (!key)
			goto out;
		tok = ts_json_next(&j, &err);
		if (tok == TS_JSON_ARR) {
			while ((tok = ts_json_next(&j, &err)) != TS_JSON_ARR_END) {
				const char *v;
				if (tok < 0)
					goto out;
				if ((v = scalar(pf, &j, tok)) && pf_kv(pf, PF_FACT, key, v, "python3 probe", -1))
					goto out;
				if ((tok == TS_JSON_OBJ || tok == TS_JSON_ARR) && ts_json_skip(&j, tok, &err))
					goto out;
			}
		} else if (tok == TS_JSON_OBJ) {
			if (ts_json_skip(&j, tok, &err))
				goto out;
		} else if (tok < 0) {
			goto out;
		} else {
			const char *v = scalar(pf, &j, tok);
			if (v && pf_kv(pf, PF_FACT, key, v, "python3 probe", -1))
				goto out;
		}
		keys++;
	}
	if (tok == TS_JSON_OBJ_END && keys)
		rc = 0;
out:
	ts_json_release(&j);
	return rc;
}
