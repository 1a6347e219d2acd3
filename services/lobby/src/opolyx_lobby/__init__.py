"""opolyx lobby service: rooms, seats, bots filling rooms, one unfinished game per player."""
