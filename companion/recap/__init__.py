"""After the game: what each game was (from the game log), its recap picture, the history of
past games, and the BG Stats link that logs a play where board gamers keep their records.

`record` (pure) turns a logged game into a `GameRecord`; `history` aggregates records;
`bgstats` builds the createPlay link and its QR code; `crops` keeps each served bowl's picture
beside the game log; `picture` draws the recap PNG. Nothing here imports Kivy.
"""
