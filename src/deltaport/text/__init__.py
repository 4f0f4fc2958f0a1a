"""Text for people: counts and expiries in words (``wording``), and what came from elsewhere
made safe for a terminal (``terminal``). Imports nothing of ours, so every package may use it."""
