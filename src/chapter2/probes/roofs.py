"""Measure this machine's roofs (`chapter2.roofline.measure_roofs`) and print them as JSON.

    python -m chapter2.probes.roofs

A build runs it once, in a process of its own, before the first page that places a program
under the roofs executes; every such page then reads the same roofs.
"""

from chapter2.roofline import measure_roofs

if __name__ == "__main__":
    print(measure_roofs().as_json())
