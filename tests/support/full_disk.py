"""A file whose writes fail as on a full device, for the tests of how writers report ENOSPC."""

import errno
import os


class FullDiskFile:
    """Wraps an open file; writes fail with ENOSPC (or `code`, e.g. EFBIG: a file size limit) once more
    than `allowed` bytes were written."""

    def __init__(self, file, allowed=0, code=errno.ENOSPC):
        self.file = file
        self.allowed = allowed
        self.written = 0
        self.code = code

    def write(self, data):
        self.written += len(data)
        if self.written > self.allowed:
            raise OSError(self.code, os.strerror(self.code))
        return self.file.write(data)

    def __getattr__(self, name):
        return getattr(self.file, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.file.close()
