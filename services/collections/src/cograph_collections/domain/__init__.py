"""The collections domain: its rules and the structs the other layers pass around.

Pure: no I/O, no transport. A rule that refuses raises a cograph_errors error, which the gRPC
interceptor maps to its status code. The markdown package (parse, chunk, links) is domain code
too; it stays where its compiled extension is built.
"""
