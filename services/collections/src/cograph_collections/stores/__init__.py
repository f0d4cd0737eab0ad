"""The stores: one class per aggregate, the only code that runs SQL, each from its own file of
named queries under sql/. A store takes a connection, so the application layer that calls it owns
the transaction; it raises cograph_errors errors, never a transport's."""
