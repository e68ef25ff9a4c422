/* null_inject.c: a CUDA injection library that does nothing (bench/tracer/README.md run 22). With
 * CUDA_INJECTION64_PATH pointing at it, the driver loads it at cuInit and calls InitializeInjection,
 * which returns at once: what a program pays for the injection mechanism itself, with no tracer.
 * Built by bench/tracer/cost_call.sh: cc -shared -fPIC -o null_inject.so null_inject.c */
__attribute__((visibility("default"))) int InitializeInjection(void);

int InitializeInjection(void)
{
	return 1;
}
