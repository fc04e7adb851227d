"""One module per measurement; each runs its workloads and returns its tables (warmup.py only checks)."""
