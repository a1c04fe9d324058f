"""Ramen! Ramen! table companion: camera -> detection -> tracking -> rules -> screen."""

__version__ = "0.1.0"
