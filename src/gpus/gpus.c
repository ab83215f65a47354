/*
 * gpus.c - the built-in accelerator catalog and SKU lookup.
 *
 * Peak numbers are copied from the sources named next to them
 * (../shared/reference/flops-memory-workflow.md section 6 restates them);
 * anything not published stays TS_PEAK_UNKNOWN so MFU can never be quoted
 * against a guessed denominator. The table is data: to correct a number,
 * change it here together with its source string.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "trainscope/gpus.h"

#define GIB(x) ((int64_t)(x) << 30)
#define K(v) { TS_PEAK_KNOWN, (v), NULL, NULL }
#define KN(v, note) { TS_PEAK_KNOWN, (v), NULL, (note) }
#define NS { TS_PEAK_UNSUPPORTED, 0, NULL, NULL }
#define UN(note) { TS_PEAK_UNKNOWN, 0, NULL, (note) }

static const char *const prec_names[TS_PREC_COUNT] = {
	"fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4"
};

static const char SRC_H100[] =
	"NVIDIA H100 datasheet as tabulated at glennklockwood.com/garden/processors/h100 "
	"(BF16 989.4, FP8 1978.9, TF32 494.7; sparse figures are 2x); FP16 989.43 hmc-tech.com";
static const char SRC_H200[] =
	"NVIDIA H200 datasheet: the H100 SXM matrix peaks (same Hopper die and clocks; "
	"BF16 989.4, FP8 1978.9, TF32 494.7 dense as tabulated at "
	"glennklockwood.com/garden/processors/h100), 141 GB HBM3e at 4.8 TB/s";
static const char SRC_B200[] =
	"NVIDIA Blackwell datasheet, HGX B200 (1000 W), as tabulated at "
	"glennklockwood.com/garden/processors/B200; torchtitan peak table (B200 2.25e15)";
static const char SRC_GB200[] =
	"NVIDIA Blackwell datasheet, GB200 NVL72 per GPU (1200 W), as tabulated at "
	"glennklockwood.com/garden/processors/B200; torchtitan peak table (GB200 2.5e15)";

static const struct ts_gpu builtin[] = {
	{ .sku = "A100-SXM-80GB", .vendor = "NVIDIA",
	  .aliases = "A100,A100-80GB,A100 SXM,A100-SXM4-80GB,A100 80GB",
	  .peak = { K(19.5), K(156), K(312), K(312), NS, K(624), NS },
	  .source = "nvidia.com/a100 datasheet, A100 80GB SXM column (torchtitan uses 312e12)",
	  .memory_bytes = GIB(80), .memory_note = "80 GB HBM2e",
	  .mem_bw_bytes_per_s = 2.04e12, .link = "NVLink3", .link_bytes_per_s = 600e9,
	  .link_domain = 8 },
	{ .sku = "A100-SXM-40GB", .vendor = "NVIDIA",
	  .aliases = "A100-40GB,A100-SXM4-40GB,A100 40GB",
	  .peak = { K(19.5), K(156), K(312), K(312), NS, K(624), NS },
	  .source = "nvidia.com/a100 datasheet, A100 40GB SXM column (torchtitan uses 312e12)",
	  .memory_bytes = GIB(40), .memory_note = "40 GB HBM2",
	  .mem_bw_bytes_per_s = 1.56e12, .link = "NVLink3", .link_bytes_per_s = 600e9,
	  .link_domain = 8 },
	{ .sku = "H100-SXM", .vendor = "NVIDIA",
	  .aliases = "H100,H100 SXM5,H100-SXM5-80GB,H100 80GB HBM3",
	  .peak = { K(66.9), K(494.7), KN(989.4, "Megatron-LM README rounds to 989"), K(989.4),
		    K(1978.9), K(1978.9), NS },
	  .source = SRC_H100,
	  .memory_bytes = GIB(80), .memory_note = "80 GB HBM3",
	  .mem_bw_bytes_per_s = 3.35e12, .link = "NVLink4", .link_bytes_per_s = 900e9,
	  .link_domain = 8 },
	{ .sku = "H100-PCIe", .vendor = "NVIDIA",
	  .aliases = "H100 PCIe,H100-PCIE-80GB,H100 PCIe 80GB",
	  .peak = { K(51.2), K(378), K(756), K(756), K(1513), K(1513), NS },
	  .source = "NVIDIA H100 datasheet (PCIe form factor; sparse figures are 2x)",
	  .memory_bytes = GIB(80), .memory_note = "80 GB HBM2e",
	  .mem_bw_bytes_per_s = 2.0e12, .link = "NVLink bridge (pairs); PCIe5",
	  .link_bytes_per_s = 600e9, .link_domain = 2 },
	{ .sku = "H200-SXM", .vendor = "NVIDIA",
	  .aliases = "H200,H200 SXM,H200-141GB,H200 141GB HBM3e",
	  .peak = { K(66.9), K(494.7), K(989.4), K(989.4), K(1978.9), K(1978.9), NS },
	  .source = SRC_H200,
	  .memory_bytes = GIB(141), .memory_note = "141 GB HBM3e",
	  .mem_bw_bytes_per_s = 4.8e12, .link = "NVLink4", .link_bytes_per_s = 900e9,
	  .link_domain = 8 },
	{ .sku = "H800-SXM", .vendor = "NVIDIA",
	  .aliases = "H800,H800 SXM,H800-80GB,H800 80GB HBM3",
	  .peak = { KN(66.9, "approximately H100 SXM (same die)"), K(494.7), K(989.4), K(989.4),
		    K(1978.9), K(1978.9), NS },
	  .source = "same die as H100 SXM (matrix peaks as the H100 datasheet); NVLink 400 GB/s"
		    " and FP64 about 1 TF from the philisun.com comparison",
	  .memory_bytes = GIB(80), .memory_note = "80 GB HBM3",
	  .mem_bw_bytes_per_s = 3.35e12, .link = "NVLink", .link_bytes_per_s = 400e9,
	  .link_domain = 8,
	  .notes = "veRL uses 989 TF, nanochat 756 TF (treating H800 as PCIe): pick by form factor" },
	{ .sku = "H20", .vendor = "NVIDIA",
	  .aliases = "H20-96GB,H20 96GB",
	  .peak = { K(44), K(74), K(148), K(148), K(296), K(296), NS },
	  .source = "Chinese spec listings (zangshuxian.com); veRL/VeOmni peak table (148e12)",
	  .memory_bytes = GIB(96), .memory_note = "96 GB HBM3 (a 141 GB variant came later)",
	  .mem_bw_bytes_per_s = 4.0e12, .link = "NVLink", .link_bytes_per_s = 900e9,
	  .link_domain = 8 },
	{ .sku = "L40S", .vendor = "NVIDIA",
	  .aliases = "L40S-48GB",
	  .peak = { K(91.6), K(183), K(362.05), K(362.05), K(733), K(733), NS },
	  .source = "NVIDIA L40S datasheet table (mullet.se); torchtitan 362e12, veRL 362.05e12",
	  .memory_bytes = GIB(48), .memory_note = "48 GB GDDR6",
	  .mem_bw_bytes_per_s = 864e9, .link = "PCIe4 x16 (no NVLink)", .link_bytes_per_s = 64e9 },
	{ .sku = "B200", .vendor = "NVIDIA",
	  .aliases = "B200 HGX,HGX B200,B200-180GB",
	  .peak = { K(80), K(1100), K(2250), K(2250), K(4500), K(4500), K(9000) },
	  .source = SRC_B200,
	  .memory_bytes = GIB(180), .memory_note = "180 GB usable (192 GB HBM3e)",
	  .mem_bw_bytes_per_s = 8e12, .link = "NVLink5", .link_bytes_per_s = 1.8e12,
	  .link_domain = 8, .notes = "HGX, 1000 W" },
	{ .sku = "GB200", .vendor = "NVIDIA",
	  .aliases = "GB200 NVL72,GB200-NVL72",
	  .peak = { K(90), K(1250), K(2500), K(2500), K(5000), K(5000), K(10000) },
	  .source = SRC_GB200,
	  .memory_bytes = GIB(186), .memory_note = "186 GB usable (192 GB HBM3e)",
	  .mem_bw_bytes_per_s = 8e12, .link = "NVLink5 (NVL72 domain)", .link_bytes_per_s = 1.8e12,
	  .link_domain = 72, .notes = "per GPU, 1200 W" },
	{ .sku = "B300", .vendor = "NVIDIA",
	  .aliases = "B300 HGX,HGX B300",
	  .peak = { UN(NULL), UN(NULL), KN(2500, "approximate: about the same as GB200"),
		    KN(2500, "approximate: about the same as GB200"),
		    KN(5000, "approximate: about the same as GB200"), UN(NULL),
		    KN(15000, "approximate: about 15 PF dense") },
	  .source = "trainscope reference (flops-memory-workflow.md section 6) for B300: Blackwell Ultra"
		    " is about GB200 BF16/FP8 with 288 GB HBM3e and about 15 PF FP4 dense",
	  .memory_bytes = GIB(288), .memory_note = "288 GB HBM3e",
	  .notes = "approximate figures; supply a catalog file with datasheet numbers if you have them" },
	{ .sku = "GB300", .vendor = "NVIDIA",
	  .aliases = "GB300 NVL72,GB300-NVL72",
	  .peak = { UN(NULL), UN(NULL), KN(2500, "approximate: about the same as GB200"),
		    KN(2500, "approximate: about the same as GB200"),
		    KN(5000, "approximate: about the same as GB200"), UN(NULL),
		    KN(15000, "approximate: about 15 PF dense") },
	  .source = "trainscope reference (flops-memory-workflow.md section 6) for GB300: Blackwell Ultra"
		    " is about GB200 BF16/FP8 with 288 GB HBM3e and about 15 PF FP4 dense",
	  .memory_bytes = GIB(288), .memory_note = "288 GB HBM3e",
	  .notes = "approximate figures; supply a catalog file with datasheet numbers if you have them" },
	{ .sku = "MI250X", .vendor = "AMD",
	  .aliases = "MI250X OAM,Instinct MI250X",
	  .peak = { KN(47.9, "vector; 95.7 matrix FP32"), NS, K(383), K(383), NS, K(383), NS },
	  .source = "AMD Instinct MI250X product page (383 TF FP16/BF16 per package)",
	  .memory_bytes = GIB(128), .memory_note = "128 GB HBM2e",
	  .mem_bw_bytes_per_s = 3.2e12, .link = "Infinity Fabric (8 links)",
	  .notes = "per package of 2 GCDs; each GCD enumerates as a device, so per-device MFU"
		   " uses MI250X-GCD (torchtitan: 191.5e12)" },
	{ .sku = "MI250X-GCD", .vendor = "AMD",
	  .aliases = "MI250X GCD",
	  .peak = { UN(NULL), NS, K(191.5), K(191.5), NS, UN(NULL), NS },
	  .source = "torchtitan peak table (191.5e12 per GCD = half of AMD's 383 TF per package)",
	  .memory_bytes = GIB(64), .memory_note = "half of the package's 128 GB",
	  .mem_bw_bytes_per_s = 1.6e12 },
	{ .sku = "MI300X", .vendor = "AMD",
	  .aliases = "Instinct MI300X,MI300X OAM",
	  .peak = { K(163.4), K(653.7), K(1307.4), K(1307.4), K(2614.9), K(2614.9), NS },
	  .source = "AMD MI300X product page (torchtitan about 1300e12, nanochat 1.3074e15;"
		    " veRL uses 1336e12); Infinity Fabric 896 GB/s from gpu.blog",
	  .memory_bytes = GIB(192), .memory_note = "192 GB HBM3",
	  .mem_bw_bytes_per_s = 5.3e12, .link = "Infinity Fabric (7 x 128 GB/s)",
	  .link_bytes_per_s = 896e9, .link_domain = 8 },
	{ .sku = "MI325X", .vendor = "AMD",
	  .aliases = "Instinct MI325X,MI325X OAM",
	  .peak = { K(163.4), K(653.7), K(1307.4), K(1307.4), K(2614.9), K(2614.9), NS },
	  .source = "AMD MI325X product page; Vultr docs (256 GB, 6.0 TB/s, 1307 TF);"
		    " Infinity Fabric 896 GB/s from gpu.blog",
	  .memory_bytes = GIB(256), .memory_note = "256 GB HBM3E",
	  .mem_bw_bytes_per_s = 6.0e12, .link = "Infinity Fabric (7 x 128 GB/s)",
	  .link_bytes_per_s = 896e9, .link_domain = 8 },
	{ .sku = "MI355X", .vendor = "AMD",
	  .aliases = "Instinct MI355X,MI355X OAM",
	  .peak = { KN(157.3, "from memory of AMD's spec page, not verified"), UN(NULL),
		    KN(2516, "about 2.5 PF"), KN(2516, "about 2.5 PF"), KN(5033, "about 5.0 PF"),
		    UN(NULL), KN(10066, "MXFP4/FP6, about 10.1 PF") },
	  .source = "AMD launch coverage (Tom's Hardware: 20.1 PF FP4/FP6 sparse; The Register:"
		    " 10 PF FP4 dense-class; ISSCC 2026 report: 5 PF FP8; nanochat 2.5e15 BF16)",
	  .memory_bytes = GIB(288), .memory_note = "288 GB HBM3E",
	  .mem_bw_bytes_per_s = 8e12, .link = "Infinity Fabric", .notes = "1400 W" },
	{ .sku = "MTT-S4000", .vendor = "Moore Threads",
	  .aliases = "MTT S4000,S4000,MTTS4000",
	  .peak = { K(25), K(50), K(100), K(100), NS, K(200), NS },
	  .source = "Moore Threads launch figures (io-tech.fi, Tom's Hardware)",
	  .memory_bytes = GIB(48), .memory_note = "48 GB GDDR6",
	  .mem_bw_bytes_per_s = 768e9, .link = "MTLink 1.0; PCIe5", .link_bytes_per_s = 240e9,
	  .notes = "the 2025 prospectus-based listing quotes 25/49/98/196 and 450 W;"
		   " MT-MegatronLM's MFU helper divides by 98e12" },
	{ .sku = "MTT-S5000", .vendor = "Moore Threads",
	  .aliases = "MTT S5000,S5000,MTTS5000",
	  .peak = { UN("not published"), UN("not published"),
		    UN("not published; 500 would follow only if FP8 = 2 x BF16, an assumption"),
		    UN("not published"),
		    KN(1000, "'1000 TFLOPS' single-card AI compute; 1024 also cited; 920 air-cooled"),
		    UN("not published"), UN("not published") },
	  .source = "Moore Threads Feb-2026 disclosure (80 GB, 1.6 TB/s, 784 GB/s card-to-card,"
		    " 1000 TFLOPS); 1024 TFLOPS FP8 per kuaikeji",
	  .memory_bytes = GIB(80), .memory_note = "80 GB",
	  .mem_bw_bytes_per_s = 1.6e12, .link = "card-to-card", .link_bytes_per_s = 784e9,
	  .notes = "Moore Threads cites 60 % MFU dense / about 40 % MoE on S5000 clusters with"
		   " the denominator unstated" },
};

const char *ts_precision_name(int prec)
{
	return prec >= 0 && prec < TS_PREC_COUNT ? prec_names[prec] : "?";
}

int ts_precision_parse(const char *s)
{
	static const struct { const char *name; int prec; } extra[] = {
		{ "mxfp8", TS_PREC_FP8 }, { "e4m3", TS_PREC_FP8 }, { "hybrid", TS_PREC_FP8 },
		{ "nvfp4", TS_PREC_FP4 }, { "mxfp4", TS_PREC_FP4 }, { "half", TS_PREC_FP16 },
		{ "float32", TS_PREC_FP32 }, { "bfloat16", TS_PREC_BF16 }, { "float16", TS_PREC_FP16 },
	};
	for (int i = 0; i < TS_PREC_COUNT; i++)
		if (strcasecmp(s, prec_names[i]) == 0)
			return i;
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
		if (strcasecmp(s, extra[i].name) == 0)
			return extra[i].prec;
	return -1;
}

int ts_gpu_catalog_init(struct ts_gpu_catalog *c)
{
	size_t n = sizeof(builtin) / sizeof(builtin[0]);

	memset(c, 0, sizeof(*c));
	ts_arena_init(&c->arena);
	if (ts_grow((void **)&c->v, &c->cap, n, sizeof(*c->v)))
		return TS_ENOMEM;
	memcpy(c->v, builtin, sizeof(builtin));
	c->n = n;
	return 0;
}

void ts_gpu_catalog_release(struct ts_gpu_catalog *c)
{
	free(c->v);
	c->v = NULL;
	c->n = c->cap = 0;
	ts_arena_release(&c->arena);
}

/* Lowercase, drop spaces, '-', '_' and a leading vendor word. */
static size_t normalize(const char *s, size_t n, char *out, size_t size)
{
	static const char *const vendors[] = { "nvidia", "amd", "instinct", "moorethreads" };
	size_t k = 0;

	for (size_t i = 0; i < n && k + 1 < size; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == ' ' || ch == '-' || ch == '_')
			continue;
		out[k++] = (char)tolower(ch);
	}
	out[k] = '\0';
	for (int again = 1; again;) {
		again = 0;
		for (size_t v = 0; v < sizeof(vendors) / sizeof(vendors[0]); v++) {
			size_t vl = strlen(vendors[v]);
			if (k > vl && memcmp(out, vendors[v], vl) == 0) {
				memmove(out, out + vl, k - vl + 1);
				k -= vl;
				again = 1;
			}
		}
	}
	return k;
}

static int name_matches(const struct ts_gpu *g, const char *want)
{
	char buf[128];
	const char *p, *comma;

	normalize(g->sku, strlen(g->sku), buf, sizeof(buf));
	if (strcmp(buf, want) == 0)
		return 1;
	for (p = g->aliases; p && *p; p = comma ? comma + 1 : NULL) {
		comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		normalize(p, n, buf, sizeof(buf));
		if (strcmp(buf, want) == 0)
			return 1;
		if (!comma)
			break;
	}
	return 0;
}

const struct ts_gpu *ts_gpu_find(const struct ts_gpu_catalog *c, const char *name)
{
	char want[128];

	if (normalize(name, strlen(name), want, sizeof(want)) == 0)
		return NULL;
	for (size_t i = 0; i < c->n; i++)
		if (name_matches(&c->v[i], want))
			return &c->v[i];
	return NULL;
}

int ts_gpu_peak(const struct ts_gpu *g, int prec, double *tflops, const char **source,
		struct ts_err *err)
{
	const struct ts_peak *p;

	if (prec < 0 || prec >= TS_PREC_COUNT)
		return ts_err_set(err, TS_EUSAGE, "unknown precision");
	p = &g->peak[prec];
	if (p->state == TS_PEAK_KNOWN) {
		*tflops = p->tflops;
		*source = p->source ? p->source : g->source;
		return 0;
	}
	if (p->state == TS_PEAK_UNSUPPORTED)
		return ts_err_set(err, TS_EUNSUPPORTED,
				  "%s has no dense %s peak (the precision is not supported);"
				  " pick another --precision, or give the peak with --peak-tflops X"
				  " or a catalog file (--catalog FILE)", g->sku, prec_names[prec]);
	return ts_err_set(err, TS_EUNSUPPORTED,
			  "the dense %s peak of %s is unknown (%s); give it with --peak-tflops X"
			  " or a catalog file (--catalog FILE, format in docs/mfu.md)",
			  prec_names[prec], g->sku, p->note ? p->note : "not published");
}
