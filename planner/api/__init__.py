"""REST API under /api/v1/: tokens, workloads, plans, versions, exports, share links, estimates."""
