"""Ramen! Ramen! table companion: camera -> detection -> tracking -> rules -> screen."""

from companion.offline import stay_offline

__version__ = "0.1.0"

stay_offline()  # before ultralytics can be imported by any path
