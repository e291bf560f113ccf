"""Data: sources (built-in, CSV, tensor files, user targets), the seeded split, and loaders."""
