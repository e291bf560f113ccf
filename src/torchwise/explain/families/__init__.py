"""What explain knows: one module per family of errors, each a ``KNOWN`` list of table entries
(a regex that recognises the message and a builder that writes the answer)."""
