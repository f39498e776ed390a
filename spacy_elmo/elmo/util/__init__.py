"""The floor below everything else: reading and atomically writing files (io), HDF5 files that hold
their own data and report failed writes (hdf5), turning a settings
model's validation errors into the package's errors (validation), naming the CPU for benchmarks (machine)."""
