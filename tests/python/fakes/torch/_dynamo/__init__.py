"""torch._dynamo: only what llmprof_auto patches (eval_frame.OptimizedModule)."""
