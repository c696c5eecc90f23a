"""Parse a Prometheus text exposition (stdin) with the reference Python
client's parser and print what it found as JSON: one object per family
(name, type, help, samples as [name, labels, value]), in order.  Used by
t/metrics.t; run with Debian's /usr/bin/python3 (python3-prometheus-client)."""
import json
import math
import sys

from prometheus_client.parser import text_string_to_metric_families

families = []
for fam in text_string_to_metric_families(sys.stdin.read()):
    families.append({
        "name": fam.name,
        "type": fam.type,
        "help": fam.documentation,
        "samples": [[s.name, s.labels,
                     None if math.isnan(s.value) else s.value]
                    for s in fam.samples],
    })
json.dump(families, sys.stdout)
