/* cupti_lib_fake.c: a stand-in libcupti for inject/test/cupti_switch.c. The tracer's real cupti.c
 * opens it through LLMPROF_CUPTI_LIB and calls it as it would call CUPTI; it only keeps the state
 * those calls leave (one subscriber at most, the callbacks enabled on it, the activity kinds on,
 * detaches),
 * which the test program reads with lp_fake_cupti_state. No GPU, no CUDA driver. Built as a shared
 * library; plain C, CUPTI's headers for the types only. */
#include <cupti.h>
#include <stdint.h>
#include <string.h>

#define VISIBLE __attribute__((visibility("default")))

static int subscribed, subscribes, finalizes;
static CUpti_CallbackFunc callback;     /* the subscriber's, for lp_fake_cupti_fire */
static unsigned char enabled[4][2048];  /* [domain][cbid] on the current subscription */
static unsigned kinds_on;               /* bit per activity kind < 32 */

VISIBLE void lp_fake_cupti_state(int *subscribers, int *callbacks, int *kinds, int *subscriptions, int *finalized);
VISIBLE int lp_fake_cupti_fire(CUpti_CallbackDomain d, CUpti_CallbackId cbid, const void *data);

/* Calls the subscriber's callback as CUPTI would for (d, cbid) with `data`, when that callback is
 * enabled; 1 if it was called. */
int lp_fake_cupti_fire(CUpti_CallbackDomain d, CUpti_CallbackId cbid, const void *data)
{
	if (!subscribed || !callback || (unsigned)d >= 4 || cbid >= 2048 || !enabled[d][cbid])
		return 0;
	callback(NULL, d, cbid, data);
	return 1;
}

void lp_fake_cupti_state(int *subscribers, int *callbacks, int *kinds, int *subscriptions, int *finalized)
{
	int n = 0, d, c;
	for (d = 0; d < 4; d++)
		for (c = 0; c < 2048; c++)
			n += enabled[d][c];
	*subscribers = subscribed;
	*callbacks = n;
	*kinds = __builtin_popcount(kinds_on);
	*subscriptions = subscribes;
	*finalized = finalizes;
}

VISIBLE CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
	*s = r == CUPTI_SUCCESS ? "ok" : "fake error";
	return CUPTI_SUCCESS;
}

VISIBLE CUptiResult cuptiGetVersion(uint32_t *v)
{
	*v = CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

VISIBLE CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc f, void *u)
{
	(void)u;
	if (subscribed)
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	callback = f;
	subscribed = 1;
	subscribes++;
	*h = (CUpti_SubscriberHandle)(uintptr_t)subscribes;
	return CUPTI_SUCCESS;
}

VISIBLE CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h)
{
	if (!subscribed || (uintptr_t)h != (uintptr_t)subscribes)
		return CUPTI_ERROR_INVALID_PARAMETER;
	subscribed = 0;
	memset(enabled, 0, sizeof(enabled));
	return CUPTI_SUCCESS;
}

VISIBLE CUptiResult cuptiEnableCallback(uint32_t on, CUpti_SubscriberHandle h, CUpti_CallbackDomain d,
	CUpti_CallbackId cbid)
{
	if (!subscribed || (uintptr_t)h != (uintptr_t)subscribes || (unsigned)d >= 4 || cbid >= 2048)
		return CUPTI_ERROR_INVALID_PARAMETER;
	enabled[d][cbid] = on ? 1 : 0;
	return CUPTI_SUCCESS;
}

/* four driver APIs exist: a launch, a graph launch, a copy, one that is none of them */
VISIBLE CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain d, uint32_t cbid, const char **name)
{
	if (d != CUPTI_CB_DOMAIN_DRIVER_API)
		return CUPTI_ERROR_INVALID_PARAMETER;
	switch (cbid) {
	case 10: *name = "cuInit"; return CUPTI_SUCCESS;
	case 11: *name = "cuLaunchKernel"; return CUPTI_SUCCESS;
	case 12: *name = "cuMemcpyHtoD_v2"; return CUPTI_SUCCESS;
	case 13: *name = "cuGraphLaunch"; return CUPTI_SUCCESS;
	default: return CUPTI_ERROR_INVALID_PARAMETER;
	}
}

VISIBLE CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
	if ((unsigned)k < 32)
		kinds_on |= 1u << k;
	return CUPTI_SUCCESS;
}

VISIBLE CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
	if ((unsigned)k < 32)
		kinds_on &= ~(1u << k);
	return CUPTI_SUCCESS;
}

VISIBLE CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc a, CUpti_BuffersCallbackCompleteFunc b)
{
	(void)a;
	(void)b;
	return CUPTI_SUCCESS;
}

VISIBLE CUptiResult cuptiActivityGetNextRecord(uint8_t *b, size_t n, CUpti_Activity **r)
{
	(void)b;
	(void)n;
	(void)r;
	return CUPTI_ERROR_MAX_LIMIT_REACHED;
}

VISIBLE CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t s, size_t *n)
{
	(void)c;
	(void)s;
	*n = 0;
	return CUPTI_SUCCESS;
}

VISIBLE CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag;
	return CUPTI_SUCCESS;
}

VISIBLE CUptiResult cuptiActivityFlushPeriod(uint32_t ms)
{
	(void)ms;
	return CUPTI_SUCCESS;
}

VISIBLE CUptiResult cuptiGetTimestamp(uint64_t *t)
{
	*t = 0;
	return CUPTI_SUCCESS;
}

/* detaches: every kind off (a subscriber must have left first) */
VISIBLE CUptiResult cuptiFinalize(void)
{
	if (subscribed)
		return CUPTI_ERROR_INVALID_OPERATION;
	kinds_on = 0;
	finalizes++;
	return CUPTI_SUCCESS;
}

VISIBLE CUptiResult cuptiGetDeviceId(CUcontext c, uint32_t *id)
{
	(void)c;
	*id = 0;
	return CUPTI_SUCCESS;
}

/* a node's and a graph's id: their handle's value */
VISIBLE CUptiResult cuptiGetGraphNodeId(CUgraphNode n, uint64_t *id)
{
	*id = (uint64_t)(uintptr_t)n;
	return CUPTI_SUCCESS;
}

VISIBLE CUptiResult cuptiGetGraphId(CUgraph g, uint32_t *id)
{
	*id = (uint32_t)(uintptr_t)g;
	return CUPTI_SUCCESS;
}
