"""Infrastructure the rooms share: atomic writes, folder locks, counter-based random bits, quiet start-up,
and the one module that touches libraries' internals."""
