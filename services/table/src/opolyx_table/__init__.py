"""opolyx table service: owns running games, their timers and their storage."""
