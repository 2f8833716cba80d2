"""Beyond one process: the provider's Batch API (`batch_api`) and Ray Datasets (`ray`). Runs
shared by workers through PostgreSQL are the batch runner's own (`batch/shared.py`)."""
