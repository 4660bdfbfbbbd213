"""One claims module per page of the book, named after it (`xla_compilation` for the page
`xla-compilation`). Every module here is a page's: `chapter2.claims` imports them all."""
