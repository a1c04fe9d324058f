"""Frames -> named cards: markers and table plane, strip detector (YOLO), naming by the deck."""
