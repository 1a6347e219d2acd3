"""opolyx chat service."""
