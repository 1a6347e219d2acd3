"""opolyx progression: XP, levels, ranks, cards, missions, weekly leaderboard, follows."""
