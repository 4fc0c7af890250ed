"""Worker error reporting for the launcher (ember.distributed.run)."""
