"""The floor below everything else: reading and atomically writing files (io), turning a settings
model's validation errors into the package's errors (validation), naming the CPU for benchmarks (machine)."""
