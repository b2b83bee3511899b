"""``browsermesh demo``: an end-to-end proof through the real protocol (reference §20.3).

Module map:

- ``scenario``: the demo itself: spawn the server over stdio and run two roles through it.
- ``shop``: the bundled demo shop, a tiny loopback web shop with orders in memory.
- ``loopback``: a small loopback web server on a daemon thread, the base of every local site.
"""
