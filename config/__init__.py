import os

# One BLAS thread per process, set before anything imports numpy: web and Celery workers run in
# parallel as processes, so BLAS threads would only contend for the same cores (and a forked pool
# child inherits no thread pool to hang on). The cost engine's Monte Carlo product is one small GEMM.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

# Make the Celery app load with Django so shared_task binds to it.
from .celery import app as celery_app  # noqa: E402

__all__ = ("celery_app",)
