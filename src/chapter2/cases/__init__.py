"""Case studies: one module per worked example, apart from the generic tools."""
