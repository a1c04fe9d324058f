"""Training the strip detector: render data, train with ultralytics, evaluate, export."""
