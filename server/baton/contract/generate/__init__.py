"""The generated contract files: the JSON Schema, the TypeScript mirror, the settings block, the
shape listing.
"""
