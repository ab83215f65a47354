/*
 * pf_rules.c - decide the vendor from evidence and judge the model.
 *
 * Why: a finding is only useful with the evidence that made it fire and the
 * fix, and it must fire the same whether the model came from this machine,
 * a mounted root or a pasted report. Each rule reads only the model.
 * Rule ids and what each checks are listed in docs/preflight.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pf_int.h"

static int add(struct ts_preflight *pf, const char *id, enum ts_pf_sev sev, const char *evidence,
	       const char *fix)
{
	struct ts_pf_finding f = { id, sev, evidence, fix };

	if (!evidence)
		return TS_ENOMEM;
	return TS_VEC_PUSH(pf->findings, f);
}

static const char *where(struct ts_preflight *pf, const char *src, int64_t line)
{
	if (!src)
		return "";
	return line > 0 ? pf_fmt(pf, "%s:%lld: ", src, (long long)line) : pf_fmt(pf, "%s: ", src);
}

static const struct ts_pf_kv *fact_kv(const struct ts_preflight *pf, const char *key)
{
	for (size_t i = pf->facts.n; i-- > 0;)
		if (strcmp(pf->facts.v[i].key, key) == 0)
			return &pf->facts.v[i];
	return NULL;
}

static size_t count_vendor(const struct ts_preflight *pf, const char *v)
{
	size_t n = 0;
	for (size_t i = 0; i < pf->devices.n; i++)
		n += pf->devices.v[i].vendor && strcmp(pf->devices.v[i].vendor, v) == 0;
	return n;
}

static int lib_found(const struct ts_pf_lib *l)
{
	return l && (l->path || l->copies.n);
}

/* ------------------------------------------------------------ vendor */

static int decide_vendor(struct ts_preflight *pf)
{
	static const struct { const char *vendor, *pci, *driver, *node, *lib; } v[] = {
		{ "nvidia", "0x10de", "nvidia", "devnodes.nvidia", "cuda" },
		{ "mthreads", "0x1ed5", "mtgpu", "devnodes.mthreads", "musart" },
		{ "amd", "0x1002", "amdgpu", "devnodes.amd", NULL },
		{ "metax", "0x9999", "metax", NULL, NULL },
	};
	struct ts_sb chain;
	const char *pick = NULL;
	int mixed = 0;

	ts_sb_init(&chain);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t nd = count_vendor(pf, v[i].vendor);
		const struct ts_pf_driver *d = pf_driver_find(pf, v[i].driver);
		const char *node = v[i].node ? pf_host(pf, v[i].node) : NULL;
		const struct ts_pf_lib *l = v[i].lib ? pf_lib_find(pf, v[i].lib) : NULL;
		if (!nd && !d && !node)
			continue;
		if (pick && nd)
			mixed = 1;
		if (!pick || (nd && !count_vendor(pf, pick)))
			pick = v[i].vendor;
		ts_sb_addf(&chain, "%s%s:", chain.len ? "; " : "", v[i].vendor);
		if (nd) {
			int pci = 0;
			for (size_t k = 0; k < pf->devices.n; k++)
				pci |= pf->devices.v[k].vendor && !strcmp(pf->devices.v[k].vendor, v[i].vendor) &&
				       pf->devices.v[k].vendor_id && pf->devices.v[k].bdf;
			ts_sb_addf(&chain, " %zu device(s)%s%s%s", nd, pci ? " (PCI vendor " : " (report)",
				   pci ? v[i].pci : "", pci ? ")" : "");
		}
		if (node) {
			const char *sp = strchr(node, ' ');
			ts_sb_addf(&chain, " node %.*s", sp ? (int)(sp - node) : (int)strlen(node), node);
		}
		if (d)
			ts_sb_addf(&chain, " driver %s %s", d->name, d->version);
		if (l && l->path)
			ts_sb_addf(&chain, " lib %s", l->path);
	}
	if (!pick) {
		/* a report without devices: its toolkit decides */
		if (ts_preflight_fact(pf, "musa.available") || ts_preflight_fact(pf, "toolkit.mcc"))
			pick = "mthreads", ts_sb_adds(&chain, "mthreads: MUSA toolkit in the report");
		else if (ts_preflight_fact(pf, "cuda.available") && !strcmp(ts_preflight_fact(pf, "cuda.available"), "true"))
			pick = "nvidia", ts_sb_adds(&chain, "nvidia: CUDA available in the report");
	}
	pf->vendor = mixed ? "mixed" : pick ? pick : "none";
	pf->vendor_chain = chain.len ? pf_dupn(pf, chain.buf, chain.len) : "no accelerator found";
	ts_sb_release(&chain);
	return pf->vendor_chain ? 0 : TS_ENOMEM;
}

/* ------------------------------------------------------------ CUDA */

/* Lowest driver of each CUDA toolkit release (CUDA release notes, "CUDA
 * Toolkit and Corresponding Driver Versions", Linux x86_64 GA drivers). */
static const struct { const char *driver; int cuda; } cuda_by_driver[] = {
	{ "580.65.06", 13000 }, { "575.51.03", 12090 }, { "570.26", 12080 },
	{ "560.28.03", 12060 }, { "555.42.02", 12050 }, { "550.54.14", 12040 },
	{ "545.23.06", 12030 }, { "535.54.03", 12020 }, { "530.30.02", 12010 },
	{ "525.60.13", 12000 }, { "520.61.05", 11080 }, { "515.43.04", 11070 },
	{ "510.39.01", 11060 }, { "495.29.05", 11050 }, { "470.42.01", 11040 },
	{ "465.19.01", 11030 }, { "460.27.03", 11020 }, { "455.23", 11010 },
	{ "450.36.06", 11000 },
};

/* "12.4" / "12.4.131" -> 12040; 0 when not a version; a minor outside
 * 0..99 is taken within it. */
static int cuda_code(const char *s)
{
	char *e;
	long maj = strtol(s, &e, 10), min = 0;

	if (e == s || maj <= 0 || maj > 99)
		return 0;
	if (*e == '.')
		min = strtol(e + 1, NULL, 10);
	return (int)(maj * 1000 + (min > 99 ? 99 : min < 0 ? 0 : min) * 10);
}

static int rule_cuda_versions(struct ts_preflight *pf)
{
	const struct ts_pf_lib *rt = pf_lib_find(pf, "cudart"), *drv = pf_lib_find(pf, "cuda");
	const struct ts_pf_kv *tc = fact_kv(pf, "torch.cuda"), *api = fact_kv(pf, "cuda.driver_api");
	const struct ts_pf_driver *kd = pf_driver_find(pf, "nvidia");
	const char *rt_v = NULL, *rt_ev = NULL, *d_ev = NULL;
	int r = 0, d = 0;

	if (rt && rt->version && rt->path) {
		rt_v = rt->version;
		rt_ev = pf_fmt(pf, "%s %s (%s)", rt->path, rt->version, rt->version_src);
	} else if (tc) {
		rt_v = tc->value;
		rt_ev = pf_fmt(pf, "%storch built with CUDA %s", where(pf, tc->source, tc->line), tc->value);
	}
	if (drv && drv->version && drv->version_src && !strcmp(drv->version_src, "cuDriverGetVersion")) {
		d = cuda_code(drv->version);
		d_ev = pf_fmt(pf, "%s cuDriverGetVersion %s", drv->path, drv->version);
	} else if (api) {
		d = cuda_code(api->value);
		d_ev = pf_fmt(pf, "%sdriver supports CUDA %s", where(pf, api->source, api->line), api->value);
	} else if (kd) {
		for (size_t i = 0; i < sizeof(cuda_by_driver) / sizeof(cuda_by_driver[0]); i++)
			if (ts_version_cmp(kd->version, cuda_by_driver[i].driver) >= 0) {
				d = cuda_by_driver[i].cuda;
				break;
			}
		if (d)
			d_ev = pf_fmt(pf, "%skernel driver %s supports CUDA %d.%d", where(pf, kd->source, kd->line),
				      kd->version, d / 1000, d % 1000 / 10);
	}
	int rc_ = rt_v ? cuda_code(rt_v) : 0;
	if (!rc_ || !d || rc_ <= d || !rt_ev || !d_ev)
		return 0;
	if (rc_ / 1000 > d / 1000)
		r |= add(pf, "cuda-runtime-newer-than-driver", TS_PF_ERROR,
			 pf_fmt(pf, "runtime CUDA %d.%d: %s; driver: %s", rc_ / 1000, rc_ % 1000 / 10, rt_ev, d_ev),
			 pf_fmt(pf, "upgrade the driver to a CUDA %d.x driver (or install the cuda-compat package on data-centre GPUs), or use a build of torch for CUDA %d.x",
				rc_ / 1000, d / 1000));
	else
		r |= add(pf, "cuda-runtime-newer-than-driver", TS_PF_WARNING,
			 pf_fmt(pf, "runtime CUDA %d.%d: %s; driver: %s (runs through minor-version compatibility; PTX JIT of newer code and new APIs fail)",
				rc_ / 1000, rc_ % 1000 / 10, rt_ev, d_ev),
			 "upgrade the driver to the runtime's release, or pin the runtime to the driver's CUDA version");
	return r;
}

static int rule_nvml_mismatch(struct ts_preflight *pf)
{
	const struct ts_pf_driver *kd = pf_driver_find(pf, "nvidia");
	const struct ts_pf_lib *nv = pf_lib_find(pf, "nvml");
	const struct ts_pf_kv *sig = fact_kv(pf, "signature.nvml_mismatch");
	const char *fix = "reboot (or unload and reload the nvidia kernel modules) so the kernel module matches the installed user-space driver, or reinstall the driver packages of the running module's version";

	if (sig) {
		const struct ts_pf_kv *lv = fact_kv(pf, "nvml.library_version");
		return add(pf, "nvml-driver-mismatch", TS_PF_ERROR,
			   pf_fmt(pf, "%s%s%s%s", where(pf, sig->source, sig->line), sig->value,
				  lv ? "; NVML library version:" : "", lv ? lv->value : ""),
			   fix);
	}
	if (nv && nv->load_error && strstr(nv->load_error, "mismatch"))
		return add(pf, "nvml-driver-mismatch", TS_PF_ERROR,
			   pf_fmt(pf, "%s: %s", nv->path ? nv->path : nv->soname, nv->load_error), fix);
	if (!kd || !nv || !nv->path)
		return 0;
	const char *slash = strrchr(nv->path, '/');
	const char *fv = pf_so_version(slash ? slash + 1 : nv->path);
	if (!fv || !strcmp(fv, "1") || ts_version_cmp(fv, kd->version) == 0)
		return 0;
	return add(pf, "nvml-driver-mismatch", TS_PF_ERROR,
		   pf_fmt(pf, "%skernel module %s; %s resolves to %s (%s)", where(pf, kd->source, kd->line),
			  kd->version, nv->soname, nv->path, fv),
		   fix);
}

/* The copy torch ships in its site-packages (pip wheels resolve their
 * libraries with RUNPATH there, after LD_LIBRARY_PATH). */
static const struct ts_pf_copy *torch_copy(const struct ts_preflight *pf, const struct ts_pf_lib *l)
{
	const char *site = pf_host(pf, "torch.site");

	for (size_t i = 0; site && i < l->copies.n; i++)
		if (!strcmp(l->copies.v[i].via, "site-packages") &&
		    !strncmp(l->copies.v[i].path, site, strlen(site)))
			return &l->copies.v[i];
	return NULL;
}

static int rule_shadowed(struct ts_preflight *pf)
{
	int r = 0;

	for (size_t i = 0; i < pf->libs.n; i++) {
		const struct ts_pf_lib *l = &pf->libs.v[i];
		const struct ts_pf_copy *tc = torch_copy(pf, l), *first = NULL;
		if (l->torch_path && tc && strcmp(l->torch_path, tc->path) != 0) {
			r |= add(pf, "library-shadowed", TS_PF_WARNING,
				 pf_fmt(pf, "/proc/self/maps after import torch: %s; torch's own copy: %s (%s)",
					l->torch_path, tc->path, tc->version ? tc->version : "?"),
				 "remove the other copy's directory from LD_LIBRARY_PATH (or preload torch's copy) so torch runs with the library it was built against");
			continue;
		}
		if (!tc || l->torch_path)
			continue;
		for (size_t k = 0; k < l->copies.n && !first; k++)
			if (!strcmp(l->copies.v[k].via, "LD_LIBRARY_PATH"))
				first = &l->copies.v[k];
		if (!first || !strcmp(first->path, tc->path))
			continue;
		r |= add(pf, "library-shadowed", TS_PF_WARNING,
			 pf_fmt(pf, "loader picks %s (%s, via LD_LIBRARY_PATH); torch was built against %s (%s)",
				first->path, first->version ? first->version : "?", tc->path,
				tc->version ? tc->version : "?"),
			 pf_fmt(pf, "drop %.*s from LD_LIBRARY_PATH, or install the %s version torch ships",
				(int)(strrchr(first->path, '/') - first->path), first->path, l->name));
	}
	return r;
}

/* ------------------------------------------------------------ PCIe */

static int rule_pcie(struct ts_preflight *pf)
{
	int r = 0;

	for (size_t i = 0; i < pf->devices.n; i++) {
		const struct ts_pf_device *d = &pf->devices.v[i];
		const char *w = where(pf, d->source, d->line);
		const char *id = d->bdf ? d->bdf : d->name ? d->name : "device";
		if (d->width_cur > 0 && d->width_max > 0 && d->width_cur < d->width_max)
			r |= add(pf, "pcie-link-degraded", TS_PF_WARNING,
				 pf_fmt(pf, "%s%s link width x%d of x%d", w, id, d->width_cur, d->width_max),
				 "reseat the card or riser, check the slot's lane wiring and BIOS bifurcation; a narrower link cuts host-device and P2P bandwidth");
		if (d->speed_cur_gts > 0 && d->speed_max_gts > 0 && d->speed_cur_gts < d->speed_max_gts)
			r |= add(pf, "pcie-link-degraded", TS_PF_INFO,
				 pf_fmt(pf, "%s%s link speed %.1f GT/s of %.1f GT/s", w, id, d->speed_cur_gts,
					d->speed_max_gts),
				 "idle GPUs lower the link speed to save power: read it again under load; if it stays low, check the slot generation and BIOS settings");
	}
	return r;
}

/* ------------------------------------------------------------ MUSA */

/* Device memory of each SKU as mthreads-gmi reports it (musa.md 1.9 and
 * the healthy samples: S4000 49152 MiB, S5000 81920 MiB). */
static const struct { const char *name; int64_t mib; } musa_sku[] = {
	{ "MTT S4000", 49152 }, { "MTT S5000", 81920 }, { "MTT S3000", 32768 }, { "MTT S80", 16384 },
};

static int rule_musa_iommu(struct ts_preflight *pf)
{
	const char *fix = "enable the IOMMU on the kernel command line (intel_iommu=on iommu.passthrough=0, or amd_iommu=on on AMD/Hygon hosts), disable ACS for multi-GPU P2P, and reboot (tutorial_on_musa environment FAQ)";
	int r = 0;

	for (size_t i = 0; i < pf->devices.n; i++) {
		const struct ts_pf_device *d = &pf->devices.v[i];
		if (!d->name || d->mem_total_mib < 0)
			continue;
		for (size_t k = 0; k < sizeof(musa_sku) / sizeof(musa_sku[0]); k++)
			if (!strcmp(d->name, musa_sku[k].name) && d->mem_total_mib < musa_sku[k].mib)
				r |= add(pf, "musa-iommu-off", TS_PF_ERROR,
					 pf_fmt(pf, "%s%s total %lld MiB < %lld MiB expected for %s%s: IOMMU off (musaGetDeviceCount fails with error 801)",
						where(pf, d->source, d->line), d->bdf ? d->bdf : d->name,
						(long long)d->mem_total_mib, (long long)musa_sku[k].mib, d->name,
						d->mem_used_mib > d->mem_total_mib ? pf_fmt(pf, ", used %lld MiB > total", (long long)d->mem_used_mib) : ""),
					 fix);
	}
	const char *units = pf_host(pf, "iommu.units");
	if (count_vendor(pf, "mthreads") && units && !strcmp(units, "0")) {
		const char *cmd = pf_host(pf, "iommu.cmdline");
		r |= add(pf, "musa-iommu-off", TS_PF_ERROR,
			 pf_fmt(pf, "/sys/class/iommu has no IOMMU unit with %zu Moore Threads device(s); /proc/cmdline iommu options: %s",
				count_vendor(pf, "mthreads"), cmd ? cmd : "unknown"),
			 fix);
	}
	return r;
}

static int rule_musa_container(struct ts_preflight *pf)
{
	const struct ts_pf_kv *sig = fact_kv(pf, "signature.libsrv_um_missing");
	const char *fix = "start the container with the Moore Threads runtime (mt-container-toolkit: --runtime mthreads, or MTHREADS_VISIBLE_DEVICES=all) so the driver's user-space libraries are mounted";
	const char *cont = pf_host(pf, "container");
	const char *nodes = pf_host(pf, "devnodes.mthreads");
	const struct ts_pf_lib *um = pf_lib_find(pf, "srv_um_musa");

	if (sig)
		return add(pf, "musa-toolkit-missing-in-container", TS_PF_ERROR,
			   pf_fmt(pf, "%s%s", where(pf, sig->source, sig->line), sig->value), fix);
	if (!cont || strcmp(cont, "yes") || (!nodes && !count_vendor(pf, "mthreads")) || lib_found(um))
		return 0;
	const struct ts_pf_kv *ck = NULL;
	for (size_t i = 0; i < pf->host.n; i++)
		if (!strcmp(pf->host.v[i].key, "container"))
			ck = &pf->host.v[i];
	return add(pf, "musa-toolkit-missing-in-container", TS_PF_ERROR,
		   pf_fmt(pf, "container (%s) with %s but libsrv_um_MUSA.so is on no search path (LD_LIBRARY_PATH, ld.so.cache, default dirs, MUSA_HOME)",
			  ck && ck->source ? ck->source : "marker", nodes ? nodes : "Moore Threads PCI devices"),
		   fix);
}

static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && path[n] == '/';
}

static int rule_mccl(struct ts_preflight *pf)
{
	const struct ts_pf_lib *l = pf_lib_find(pf, "mccl");
	const char *maca = NULL, *other = NULL;

	if (!l)
		return 0;
	for (size_t i = 0; i < l->copies.n; i++) {
		if (under(l->copies.v[i].path, "/opt/maca"))
			maca = maca ? maca : l->copies.v[i].path;
		else
			other = other ? other : l->copies.v[i].path;
	}
	if (maca && other)
		return add(pf, "mccl-ambiguous", TS_PF_WARNING,
			   pf_fmt(pf, "libmccl.so of MetaX (%s) and of another stack (%s, Moore Threads when under MUSA_HOME); loader picks %s",
				  maca, other, l->path ? l->path : "neither"),
			   "keep only the vendor's copy on LD_LIBRARY_PATH (/usr/local/musa/lib for Moore Threads, /opt/maca/lib for MetaX); the name mccl alone does not say which");
	if (l->path && under(l->path, "/opt/maca") && !strcmp(pf->vendor, "mthreads"))
		return add(pf, "mccl-ambiguous", TS_PF_WARNING,
			   pf_fmt(pf, "Moore Threads devices but the loader picks MetaX's %s", l->path),
			   "put MUSA_HOME/lib ahead of /opt/maca/lib on LD_LIBRARY_PATH");
	return 0;
}

static int musa_stack(const struct ts_preflight *pf)
{
	const char *ma = ts_preflight_fact(pf, "musa.available");
	return lib_found(pf_lib_find(pf, "mudnn")) || ts_preflight_fact(pf, "torch_musa.version") ||
	       (ma && !strcmp(ma, "true"));
}

static int rule_tf32(struct ts_preflight *pf)
{
	const struct ts_pf_kv *flag = fact_kv(pf, "mudnn.allow_tf32");
	const struct ts_pf_lib *md = pf_lib_find(pf, "mudnn");
	const struct ts_pf_kv *ma = fact_kv(pf, "musa.available");

	if (!musa_stack(pf) || (flag && !strcmp(flag->value, "false")))
		return 0;
	const char *ev = flag ? pf_fmt(pf, "torch.backends.mudnn.allow_tf32 = %s", flag->value)
		: lib_found(md) ? pf_fmt(pf, "muDNN %s (%s): TF32 on by default", md->path ? md->path : md->copies.v[0].path,
					   md->version ? md->version : "version unknown")
		: pf_fmt(pf, "%sMUSA torch stack (muDNN computes float32 matmul/conv in TF32 by default)",
			 ma ? where(pf, ma->source, ma->line) : "");
	return add(pf, "tf32-default-differs", TS_PF_WARNING,
		   pf_fmt(pf, "%s; torch's CUDA default is allow_tf32 = False (a 64x64 float32 mm drifts ~2e-2)", ev),
		   "set torch.backends.mudnn.allow_tf32 = False when comparing numerics with CUDA runs, or record TF32 in the contract");
}

/* ------------------------------------------------------------ environment */

static int env_known(const struct ts_preflight *pf)
{
	const char *k = pf_host(pf, "env.known");
	return k && !strcmp(k, "yes");
}

static int positive(const char *v)
{
	return v && strtol(v, NULL, 10) > 0;
}

static int rule_env(struct ts_preflight *pf)
{
	int r = 0;
	const char *ca = ts_preflight_fact(pf, "cuda.available"), *ma = ts_preflight_fact(pf, "musa.available");
	int acc = pf->devices.n > 0 || (ca && !strcmp(ca, "true")) || (ma && !strcmp(ma, "true"));

	if (!env_known(pf) || !acc)
		return 0;
	const char *fr = pf_env(pf, "TORCH_FR_BUFFER_SIZE"), *nc = pf_env(pf, "TORCH_NCCL_TRACE_BUFFER_SIZE");
	const char *mc = pf_env(pf, "TORCH_MCCL_TRACE_BUFFER_SIZE");
	if (!positive(fr) && !positive(nc) && !positive(mc))
		r |= add(pf, "flight-recorder-off", TS_PF_WARNING,
			 pf_fmt(pf, "environment: TORCH_FR_BUFFER_SIZE=%s TORCH_NCCL_TRACE_BUFFER_SIZE=%s TORCH_MCCL_TRACE_BUFFER_SIZE=%s (0 or unset = off): a hang will not be diagnosable",
				fr ? fr : "unset", nc ? nc : "unset", mc ? mc : "unset"),
			 !strcmp(pf->vendor, "mthreads")
			 ? "export TORCH_MCCL_TRACE_BUFFER_SIZE=2000 TORCH_MCCL_DUMP_ON_TIMEOUT=1 and TORCH_MCCL_DEBUG_INFO_TEMP_FILE=<dir>/mccl_trace_rank_"
			 : "export TORCH_FR_BUFFER_SIZE=2000 (TORCH_NCCL_TRACE_BUFFER_SIZE before torch 2.9) TORCH_NCCL_DUMP_ON_TIMEOUT=1 and TORCH_FR_DUMP_TEMP_FILE=<dir>/nccl_trace_rank_");
	if (!pf_env(pf, "CUDA_DEVICE_MAX_CONNECTIONS"))
		r |= add(pf, "cuda-device-max-connections-unset", TS_PF_INFO,
			 "environment: CUDA_DEVICE_MAX_CONNECTIONS unset (the driver default of 8 hardware queues lets compute overtake the TP communication kernels)",
			 "export CUDA_DEVICE_MAX_CONNECTIONS=1 for Megatron tensor-parallel communication overlap (Megatron checks it); set the value the recipe names otherwise");
	return r;
}

/* ------------------------------------------------------------ judge */

static int cmp_finding(const void *a, const void *b)
{
	const struct ts_pf_finding *x = a, *y = b;
	if (x->sev != y->sev)
		return x->sev > y->sev ? -1 : 1;
	int c = strcmp(x->id, y->id);
	return c ? c : strcmp(x->evidence, y->evidence);
}

int ts_preflight_judge(struct ts_preflight *pf)
{
	int r = 0;

	pf->findings.n = 0;
	r |= decide_vendor(pf);
	r |= rule_nvml_mismatch(pf);
	r |= rule_cuda_versions(pf);
	r |= rule_shadowed(pf);
	r |= rule_pcie(pf);
	r |= rule_musa_iommu(pf);
	r |= rule_musa_container(pf);
	r |= rule_mccl(pf);
	r |= rule_tf32(pf);
	r |= rule_env(pf);
	ts_sort(pf->findings.v, pf->findings.n, sizeof(*pf->findings.v), cmp_finding);
	return r || pf->arena.failed ? TS_ENOMEM : 0;
}

int ts_preflight_worst(const struct ts_preflight *pf)
{
	int w = -1;
	for (size_t i = 0; i < pf->findings.n; i++)
		if ((int)pf->findings.v[i].sev > w)
			w = (int)pf->findings.v[i].sev;
	return w;
}
