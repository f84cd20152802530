"""Reading untrusted input within bounds: size and depth limits, TOML, YAML and SQLite readers,
text made safe to show, lenient numbers, "did you mean" and the temporary folders a bundle
is unpacked into. Below every stage.
"""
