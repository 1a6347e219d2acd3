"""opolyx rules library (placeholder while the engine lands)."""
