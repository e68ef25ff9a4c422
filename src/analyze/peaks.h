/* peaks.h: the device's dense peak FLOP/s for a dtype and its peak DRAM bandwidth, the
 * denominators of MFU and MBU.
 *
 * Order of resolution: the `device.peak_tflops` / `device.peak_bw_gbs` overrides; a built-in table
 * of GPUs matched by device name, each row citing its vendor source; for unknown GPUs a value
 * derived from SM count x SM clock x dense FLOP per clock per SM of the architecture, and memory
 * clock x bus width x 2 (DDR). Whatever cannot be known is "n/a" with the reason, never a guess.
 * docs/metrics.md reproduces the table.
 *
 * Ownership: plain values in the out struct. Thread-safe (the table is constant).
 *
 *   struct lp_peak pk;
 *   lp_peak_resolve(dev, "bf16", 0, 0, &pk);
 *   if (pk.flops_valid) ... pk.flops_per_s ... pk.flops_source
 */
#ifndef LP_ANALYZE_PEAKS_H
#define LP_ANALYZE_PEAKS_H

#include "profile/profile.h"

struct lp_peak {
	int flops_valid;
	double flops_per_s;        /* dense tensor peak for the dtype */
	char flops_source[200];    /* where the number comes from; the reason when not valid */
	int bw_valid;
	double bytes_per_s;
	char bw_source[200];
	char matched[64];          /* table row that matched ("H100 SXM"), "" when none */
};

struct lp_peak_row {
	const char *label;         /* "H100 SXM" */
	const char *must[3];       /* substrings the device name must all contain (case-insensitive) */
	const char *must_not;      /* substring that excludes the row (NULL none) */
	double bf16_tflops;        /* dense, fp32 accumulate */
	double bw_gbs;
	const char *source;
};

/* The built-in table, terminated by a row with label NULL. */
extern const struct lp_peak_row lp_peak_table[];

/* `dev` may be NULL (no GPU known); `dtype` is the model dtype ("bf16"); overrides <= 0 are unset. */
void lp_peak_resolve(const struct lp_device *dev, const char *dtype, double override_tflops,
	double override_bw_gbs, struct lp_peak *out);
/* Dense tensor FLOP per clock per SM for a compute capability (bf16/fp16, fp32 accumulate);
 * 0 when unknown. `geforce`: consumer parts run fp32-accumulate at half rate. */
double lp_peak_flop_per_clk_sm(int cc_major, int cc_minor, int geforce);

#endif
