"""A fake transformers for llmprof_auto's tests (tests/python/fakes/README.md)."""
