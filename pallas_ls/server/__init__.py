"""The language server (pygls). Importing this package alone does not import pygls."""
