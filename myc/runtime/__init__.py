"""Calling compiled code: argument checking and conversion, outputs."""
