"""The engine of the book "Optimizing JAX Code for Performance": helpers the pages call."""
