/*
 * preflight.h - what is really installed and loaded on a training node,
 * judged by rules that carry their evidence and a fix.
 *
 * One model (struct ts_preflight) is filled by one of three sources and then
 * judged by the same rules:
 *   ts_preflight_probe      this machine, or a mounted image/container root
 *                           (probe->root): PCI sysfs devices and links, kernel
 *                           driver versions, every copy of each accelerator
 *                           library on the search path (LD_LIBRARY_PATH, the
 *                           ld.so cache, default dirs, CUDA_HOME, MUSA_HOME,
 *                           site-packages nvidia/<pkg>/lib, /opt/maca) and the
 *                           copy the loader picks, environment knobs,
 *                           container markers, limits, IOMMU; optionally each
 *                           library dlopen'ed in a forked child with a timeout
 *                           (its resolved path and own version call) and one
 *                           python3 child through probe->run (torch build,
 *                           devices, SDPA flags, packages, /proc/self/maps);
 *   ts_preflight_from_mem   an existing report: torch collect_env, sglang
 *                           check_env, nvidia-smi -q, mthreads-gmi table or
 *                           -q --json;
 * then ts_preflight_judge fills the findings {id, severity, evidence, fix}.
 *
 * Nothing here prints or exits. The library forks only in
 * ts_preflight_load (a child that dlopens one library and reports back over
 * a pipe; the child never returns into the caller). Every string lives in
 * the model's arena; ts_preflight_release frees all of it.
 */
#ifndef TRAINSCOPE_PREFLIGHT_H
#define TRAINSCOPE_PREFLIGHT_H

#include <stddef.h>
#include <stdint.h>
#include "trainscope/contract.h"
#include "trainscope/core.h"

#define TS_PREFLIGHT_SCHEMA "trainscope.preflight/1"
#define TS_PREFLIGHT_MAX_BYTES ((size_t)16 << 20)

enum ts_pf_sev { TS_PF_INFO = 0, TS_PF_WARNING = 1, TS_PF_ERROR = 2 };

/* "info", "warning", "error". */
const char *ts_pf_sev_name(enum ts_pf_sev s);

/* One accelerator (PCI function of class display or processing accelerator
 * from a known vendor, or a GPU listed by a report). */
struct ts_pf_device {
	const char *vendor;      /* "nvidia", "mthreads", "amd", "metax" */
	const char *bdf;         /* PCI address, NULL if unknown */
	const char *name;        /* product name when a tool or report gave it */
	unsigned vendor_id, device_id;
	int numa_node;           /* -1 unknown */
	int width_cur, width_max;            /* PCIe lanes, 0 unknown */
	double speed_cur_gts, speed_max_gts; /* PCIe GT/s per lane, 0 unknown */
	const char *kdriver;     /* kernel driver bound in sysfs */
	const char *cc;          /* compute capability "3.1" */
	int64_t mem_total_mib, mem_used_mib; /* -1 unknown (reports only) */
	const char *source;      /* file the facts came from */
	int64_t line;            /* 1-based line in source, -1 */
};

/* A kernel driver and its version. */
struct ts_pf_driver {
	const char *name;        /* "nvidia", "mtgpu", ... */
	const char *version;
	const char *source;      /* "/proc/driver/nvidia/version", ... */
	int64_t line;
};

/* One copy of a library file (symlinks resolved). */
struct ts_pf_copy {
	const char *path;        /* real file, as seen inside the root */
	const char *version;     /* from the file name (libx.so.<version>), or NULL */
	const char *via;         /* "LD_LIBRARY_PATH", "ld.so.cache", "default", "ld.so.conf",
				    "CUDA_HOME", "MUSA_HOME", "site-packages", "/opt/maca" */
};

/* A user-space library of an accelerator stack. */
struct ts_pf_lib {
	const char *name;        /* "cuda", "cudart", "nvml", "nccl", "cudnn", "cupti",
				    "musa", "musart", "mtml", "mccl", "mudnn", "mupti",
				    "srv_um_musa" */
	const char *stack;       /* "cuda" or "musa" */
	const char *soname;      /* the name the loader is asked for */
	const char *path;        /* the copy the loader picks; NULL = not found */
	const char *pick_via;    /* how it was found ("LD_LIBRARY_PATH", "dlopen", ...) */
	const char *version;     /* best known version (own call, else file name) */
	const char *version_src; /* "cuDriverGetVersion", "file name", ... */
	int loaded;              /* 1 loaded in the child, 0 failed, -1 not tried */
	const char *load_error;  /* dlerror text, "timed out after N ms", ... */
	const char *torch_path;  /* mapped in python after import torch, NULL */
	TS_VEC(struct ts_pf_copy) copies;
};

/* A key/value fact with where it was read. */
struct ts_pf_kv {
	const char *key;
	const char *value;
	const char *source;
	int64_t line;
};

struct ts_pf_finding {
	const char *id;          /* "nvml-driver-mismatch", ... (docs/preflight.md) */
	enum ts_pf_sev sev;
	const char *evidence;    /* file/line/value, one line */
	const char *fix;
};

struct ts_preflight {
	const char *source;      /* "/", the root, or the report file */
	const char *vendor;      /* "nvidia", "mthreads", "amd", "metax", "mixed", "none" */
	const char *vendor_chain;/* the evidence the vendor was decided from */
	TS_VEC(struct ts_pf_device) devices;
	TS_VEC(struct ts_pf_driver) drivers;
	TS_VEC(struct ts_pf_lib) libs;
	TS_VEC(struct ts_pf_kv) env;      /* performance/debug knobs that are set */
	TS_VEC(struct ts_pf_kv) host;     /* container, limits, IOMMU, ld.so cache */
	TS_VEC(struct ts_pf_kv) facts;    /* python, torch, toolkit, packages, signatures */
	TS_VEC(struct ts_pf_kv) probes;   /* what was probed -> what it gave */
	TS_VEC(struct ts_pf_finding) findings;
	struct ts_arena arena;
};

void ts_preflight_init(struct ts_preflight *pf);
void ts_preflight_release(struct ts_preflight *pf);

/* The fact `key` (last one set), NULL when absent. */
const char *ts_preflight_fact(const struct ts_preflight *pf, const char *key);

struct ts_pf_opts {
	int load;              /* dlopen each library in a forked child */
	int load_timeout_ms;   /* per library; <= 0 means 5000 */
	int python;            /* run the python3 probe through probe->run */
};

/*
 * Fill pf from the machine described by probe (root "" = this one; envp is
 * the environment judged; run is used only for python3 when opts->python).
 * Missing files are facts ("absent"), never errors. Returns 0 or TS_ENOMEM.
 */
int ts_preflight_probe(struct ts_preflight *pf, const struct ts_probe *probe,
		       const struct ts_pf_opts *opts, struct ts_err *err);

/*
 * Fill pf from a report in memory (name is used as source and in errors):
 * collect_env, sglang check_env, nvidia-smi -q, mthreads-gmi default table or
 * -q --json. TS_EPARSE (naming the file) when the text is none of those.
 */
int ts_preflight_from_mem(struct ts_preflight *pf, const char *data, size_t n,
			  const char *name, struct ts_err *err);
/* The same on a file (read whole, capped at TS_PREFLIGHT_MAX_BYTES). */
int ts_preflight_from_file(struct ts_preflight *pf, const char *path, struct ts_err *err);

/*
 * Read a trainscope.preflight/1 file (or buffer) back: source, vendor,
 * devices, drivers, libraries (without their copies), env, host, facts and
 * findings. TS_EIO, TS_ELIMIT above TS_PREFLIGHT_MAX_BYTES, TS_EPARSE
 * (err names the file and offset) when it is not JSON or another schema.
 * Findings are kept as written; do not judge the result again.
 */
int ts_preflight_read(struct ts_preflight *pf, const char *path, struct ts_err *err);
int ts_preflight_read_mem(struct ts_preflight *pf, const char *data, size_t n, const char *name,
			  struct ts_err *err);

/* Decide the vendor and run every rule; replaces earlier findings.
 * Returns 0 or TS_ENOMEM. */
int ts_preflight_judge(struct ts_preflight *pf);

/* Worst severity among the findings, -1 when there is none. */
int ts_preflight_worst(const struct ts_preflight *pf);

/* JSON (trainscope.preflight/1, pretty, deterministic, trailing newline). */
void ts_preflight_write_json(const struct ts_preflight *pf, struct ts_sb *out);
/* The human tables. */
void ts_preflight_write_table(const struct ts_preflight *pf, struct ts_sb *out);

/* ------------------------------------------------------ loading in a child */

/* What a child reported about one library. */
struct ts_pf_load {
	int status;              /* 1 loaded, 0 dlopen failed, -1 timed out, -2 crashed */
	char path[512];          /* resolved path (dlinfo link map) */
	char version[128];       /* from the library's own version call, "" if none */
	char version_src[64];    /* the call that gave it */
	char error[256];         /* dlerror, "timed out after N ms", "killed by signal N" */
};

/*
 * dlopen `soname` (a name or a path) in a forked child, call the version
 * function of library kind `name` (see struct ts_pf_lib) when it exists, and
 * report back through a pipe. The child is SIGKILLed after timeout_ms.
 * Returns 0 (out says what happened) or TS_EINTERNAL when fork/pipe fail.
 */
int ts_preflight_load(const char *name, const char *soname, int timeout_ms,
		      struct ts_pf_load *out);

/* ------------------------------------------------------ ld.so cache */

struct ts_ldcache_entry {
	const char *key;         /* soname, NUL-terminated inside the cache data */
	const char *value;       /* path */
	int32_t flags;           /* FLAG_ELF_LIBC6 | arch bits */
};

struct ts_ldcache {
	TS_VEC(struct ts_ldcache_entry) entries; /* in file order */
	int format;              /* 1 = old "ld.so-1.7.0" only, 2 = new "glibc-ld.so.cache1.1" */
};

/*
 * Parse an ld.so.cache image (glibc's old and new formats). Entries point
 * into data, which must outlive the cache. TS_EPARSE with the byte offset
 * on a bad magic, a table past the end or a string offset out of range.
 */
int ts_ldcache_parse(struct ts_ldcache *c, const void *data, size_t n, const char *name,
		     struct ts_err *err);
void ts_ldcache_release(struct ts_ldcache *c);
/* First entry for soname whose flags suit this machine's ABI, NULL if none. */
const struct ts_ldcache_entry *ts_ldcache_find(const struct ts_ldcache *c, const char *soname);

/* ------------------------------------------------------ several nodes */

/*
 * One table (or JSON, trainscope.preflight-nodes/1) over per-node preflight
 * files: a row per file (devices, vendor, drivers, the narrowest link, the
 * versions of libcuda, libcudart, NVML, NCCL, cuDNN, libmusart, MTML, MCCL,
 * the ids of the error findings),
 * each value that is not the one most nodes share marked with '*' (a tie
 * has no majority). *outliers receives the number of nodes with a marked
 * value. TS_EIO / TS_EPARSE (naming the file) from ts_preflight_read.
 */
int ts_preflight_nodes(const char *const *paths, size_t n, int json, struct ts_sb *out,
		       size_t *outliers, struct ts_err *err);

#endif
