/* peaks.c: device name -> dense peak FLOP/s and DRAM bandwidth (see peaks.h). The analysis
 * (analyze/analysis.c) divides achieved FLOP/s and bytes/s by these to get MFU and MBU, and the
 * kernel roofline uses their ratio (the ridge point). Dense numbers only: vendor sheets often
 * print twice the value "with sparsity". */
#include "analyze/peaks.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

const struct lp_peak_row lp_peak_table[] = {
	{ "H100 PCIe", { "H100", "PCIE", NULL }, NULL, 756.0, 2000.0,
	  "NVIDIA H100 Tensor Core GPU datasheet: H100 PCIe BF16 1,513 TFLOPS with sparsity, 2 TB/s" },
	{ "H100 NVL", { "H100", "NVL", NULL }, NULL, 835.5, 3900.0,
	  "NVIDIA H100 Tensor Core GPU datasheet: H100 NVL BF16 1,671 TFLOPS with sparsity, 3.9 TB/s" },
	{ "H100 SXM", { "H100", NULL, NULL }, NULL, 989.4, 3350.0,
	  "NVIDIA H100 Tensor Core GPU datasheet: H100 SXM BF16 1,979 TFLOPS with sparsity, 3.35 TB/s" },
	{ "H200 NVL", { "H200", "NVL", NULL }, NULL, 835.5, 4800.0,
	  "NVIDIA H200 Tensor Core GPU datasheet: H200 NVL BF16 1,671 TFLOPS with sparsity, 4.8 TB/s" },
	{ "H200 SXM", { "H200", NULL, NULL }, NULL, 989.4, 4800.0,
	  "NVIDIA H200 Tensor Core GPU datasheet: H200 SXM BF16 1,979 TFLOPS with sparsity, 4.8 TB/s" },
	{ "A100 40GB", { "A100", "40GB", NULL }, NULL, 312.0, 1555.0,
	  "NVIDIA A100 Tensor Core GPU datasheet: BF16 312 TFLOPS (624 with sparsity), A100 40GB 1,555 GB/s" },
	{ "A100 80GB PCIe", { "A100", "PCIE", NULL }, NULL, 312.0, 1935.0,
	  "NVIDIA A100 Tensor Core GPU datasheet: BF16 312 TFLOPS (624 with sparsity), A100 80GB PCIe 1,935 GB/s" },
	{ "A100 80GB SXM", { "A100", NULL, NULL }, NULL, 312.0, 2039.0,
	  "NVIDIA A100 Tensor Core GPU datasheet: BF16 312 TFLOPS (624 with sparsity), A100 80GB SXM 2,039 GB/s" },
	{ "L40S", { "L40S", NULL, NULL }, NULL, 362.05, 864.0,
	  "NVIDIA L40S datasheet: BF16 733 TFLOPS with sparsity (362.05 dense), 864 GB/s" },
	{ "RTX 4090", { "4090", NULL, NULL }, NULL, 165.2, 1008.0,
	  "NVIDIA Ada Lovelace GPU architecture whitepaper: RTX 4090 FP16/BF16 tensor, FP32 accumulate, "
	  "165.2 TFLOPS dense, 1,008 GB/s" },
	{ "RTX 3090", { "3090", NULL, NULL }, " TI", 71.0, 936.0,
	  "NVIDIA Ampere GA102 GPU architecture whitepaper: RTX 3090 FP16 tensor, FP32 accumulate, "
	  "71 TFLOPS dense, 936 GB/s" },
	{ NULL, { NULL, NULL, NULL }, NULL, 0, 0, NULL },
};

static int contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle), i, j;
	for (i = 0; hay[i]; i++) {
		for (j = 0; j < n && hay[i + j]; j++)
			if (toupper((unsigned char)hay[i + j]) != toupper((unsigned char)needle[j]))
				break;
		if (j == n)
			return 1;
	}
	return n == 0;
}

double lp_peak_flop_per_clk_sm(int cc_major, int cc_minor, int geforce)
{
	/* dense tensor FLOP/clk/SM at 16-bit inputs with fp32 accumulate, from NVIDIA's architecture
	 * whitepapers: Hopper 4096 (H100: 989.4 TF = 132 SMs x 1.83 GHz x 4096), Ampere A100 2048
	 * (108 x 1.41 GHz x 2048 = 312 TF), GA10x / Ada / Turing 1024 on professional parts and 512 on
	 * GeForce (fp32 accumulate at half rate), Volta 1024 (fp16 only) */
	if (cc_major == 9 && cc_minor == 0)
		return 4096;
	if (cc_major == 8 && cc_minor == 0)
		return 2048;
	if ((cc_major == 8 && (cc_minor == 6 || cc_minor == 7 || cc_minor == 9)) || (cc_major == 7 && cc_minor == 5))
		return geforce ? 512 : 1024;
	if (cc_major == 7 && (cc_minor == 0 || cc_minor == 2))
		return 1024;
	return 0;
}

void lp_peak_resolve(const struct lp_device *dev, const char *dtype, double override_tflops,
	double override_bw_gbs, struct lp_peak *out)
{
	const struct lp_peak_row *row = NULL, *r;
	int tensor16 = dtype && (!strcmp(dtype, "bf16") || !strcmp(dtype, "fp16") ||
				 !strcmp(dtype, "bfloat16") || !strcmp(dtype, "float16"));
	memset(out, 0, sizeof(*out));
	if (dev && dev->name && *dev->name) {
		for (r = lp_peak_table; r->label && !row; r++) {
			int ok = 1, i;
			for (i = 0; i < 3 && r->must[i]; i++)
				ok = ok && contains_ci(dev->name, r->must[i]);
			if (ok && r->must_not && contains_ci(dev->name, r->must_not))
				ok = 0;
			if (ok)
				row = r;
		}
	}
	if (row)
		snprintf(out->matched, sizeof(out->matched), "%s", row->label);

	/* FLOP/s */
	if (override_tflops > 0) {
		out->flops_valid = 1;
		out->flops_per_s = override_tflops * 1e12;
		snprintf(out->flops_source, sizeof(out->flops_source), "device.peak_tflops override (%g TFLOP/s)",
			override_tflops);
	} else if (!dev) {
		snprintf(out->flops_source, sizeof(out->flops_source), "no GPU device in the profile or env.json");
	} else if (!tensor16) {
		snprintf(out->flops_source, sizeof(out->flops_source),
			"no built-in peak for dtype '%s': set device.peak_tflops", dtype && *dtype ? dtype : "unknown");
	} else if (row) {
		out->flops_valid = 1;
		out->flops_per_s = row->bf16_tflops * 1e12;
		snprintf(out->flops_source, sizeof(out->flops_source), "%s", row->source);
	} else {
		int geforce = contains_ci(dev->name, "GEFORCE") || contains_ci(dev->name, "RTX 30") ||
			      contains_ci(dev->name, "RTX 40");
		double per = lp_peak_flop_per_clk_sm(dev->cc_major, dev->cc_minor, geforce);
		if (per > 0 && dev->sm_count > 0 && dev->sm_clock_mhz > 0) {
			out->flops_valid = 1;
			out->flops_per_s = (double)dev->sm_count * (double)dev->sm_clock_mhz * 1e6 * per;
			snprintf(out->flops_source, sizeof(out->flops_source),
				"derived: %d SMs x %u MHz x %.0f FLOP/clk/SM (cc %d.%d%s; max clock: an upper bound)",
				dev->sm_count, dev->sm_clock_mhz, per, dev->cc_major, dev->cc_minor,
				geforce ? ", GeForce" : "");
		} else if (per <= 0) {
			snprintf(out->flops_source, sizeof(out->flops_source),
				"'%s' is not in the peak table and cc %d.%d has no known FLOP/clk/SM: set device.peak_tflops",
				dev->name, dev->cc_major, dev->cc_minor);
		} else {
			snprintf(out->flops_source, sizeof(out->flops_source),
				"'%s' is not in the peak table and its SM count or clock is unknown: set device.peak_tflops",
				dev->name);
		}
	}

	/* bytes/s */
	if (override_bw_gbs > 0) {
		out->bw_valid = 1;
		out->bytes_per_s = override_bw_gbs * 1e9;
		snprintf(out->bw_source, sizeof(out->bw_source), "device.peak_bw_gbs override (%g GB/s)", override_bw_gbs);
	} else if (!dev) {
		snprintf(out->bw_source, sizeof(out->bw_source), "no GPU device in the profile or env.json");
	} else if (row) {
		out->bw_valid = 1;
		out->bytes_per_s = row->bw_gbs * 1e9;
		snprintf(out->bw_source, sizeof(out->bw_source), "%s", row->source);
	} else if (dev->mem_clock_mhz > 0 && dev->mem_bus_width_bits > 0) {
		out->bw_valid = 1;
		out->bytes_per_s = (double)dev->mem_clock_mhz * 1e6 * (double)dev->mem_bus_width_bits / 8.0 * 2.0;
		snprintf(out->bw_source, sizeof(out->bw_source), "derived: %u MHz memory clock x %u-bit bus / 8 x 2 (DDR)",
			dev->mem_clock_mhz, dev->mem_bus_width_bits);
	} else {
		snprintf(out->bw_source, sizeof(out->bw_source),
			"'%s' is not in the peak table and its memory clock or bus width is unknown: set device.peak_bw_gbs",
			dev->name);
	}
}
