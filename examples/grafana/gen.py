#!/usr/bin/env python3
"""Writes gslbd.json, the Grafana dashboard for gslbd's GET /metrics (doc/api.md "The status page and the dashboard"). The JSON is the artefact
operators import (Dashboards > New > Import); this script only keeps its many panels consistent. Run it
again after editing: python3 examples/grafana/gen.py"""
import json
import os

DS = {"type": "prometheus", "uid": "${datasource}"}
SEL = 'instance=~"$instance"'
HSEL = 'instance=~"$instance",hostname=~"$hostname"'
panels = []
next_id = [1]


def target(expr, legend, ref="A", fmt=None):
    t = {"datasource": DS, "expr": expr, "legendFormat": legend, "refId": ref, "range": True}
    if fmt:
        t["format"] = fmt
    return t


def panel(kind, title, desc, x, y, w, h, targets, unit="short", stack=False, extra=None, percent=False):
    p = {
        "id": next_id[0], "type": kind, "title": title, "description": desc, "datasource": DS,
        "gridPos": {"x": x, "y": y, "w": w, "h": h},
        "targets": [target(*t) if isinstance(t, tuple) else t for t in targets],
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "options": {"legend": {"displayMode": "table", "placement": "right", "showLegend": True,
                               "calcs": ["lastNotNull", "max"]},
                    "tooltip": {"mode": "multi", "sort": "desc"}},
    }
    next_id[0] += 1
    if kind == "timeseries":
        p["fieldConfig"]["defaults"]["custom"] = {
            "drawStyle": "line", "lineWidth": 1, "fillOpacity": 20 if stack else 0, "showPoints": "never",
            "stacking": {"mode": "percent" if percent else ("normal" if stack else "none"), "group": "A"}}
    if extra:
        for k, v in extra.items():
            p[k] = v
    panels.append(p)
    return p


def row(title, y):
    panels.append({"id": next_id[0], "type": "row", "title": title, "collapsed": False,
                   "gridPos": {"x": 0, "y": y, "w": 24, "h": 1}, "panels": []})
    next_id[0] += 1


UPDOWN = {"fieldConfig": {"defaults": {
    "unit": "short", "min": 0, "max": 1,
    "mappings": [{"type": "value", "options": {"0": {"text": "down", "color": "red", "index": 0},
                                               "1": {"text": "up", "color": "green", "index": 1}}}],
    "thresholds": {"mode": "absolute", "steps": [{"color": "red", "value": None}, {"color": "green", "value": 1}]},
    "color": {"mode": "thresholds"}, "custom": {"fillOpacity": 80, "lineWidth": 0}}, "overrides": []},
    "options": {"showValue": "never", "mergeValues": True, "rowHeight": 0.9, "alignValue": "left",
                "legend": {"showLegend": False, "displayMode": "list", "placement": "bottom"},
                "tooltip": {"mode": "single", "sort": "none"}}}


def stat(title, desc, x, y, expr, unit="short", thresholds=None):
    p = panel("stat", title, desc, x, y, 4, 4, [(expr, "", "A")], unit)
    p["options"] = {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                    "colorMode": "background", "graphMode": "area", "textMode": "value", "justifyMode": "center"}
    p["fieldConfig"]["defaults"]["thresholds"] = thresholds or {
        "mode": "absolute", "steps": [{"color": "blue", "value": None}]}
    p["fieldConfig"]["defaults"]["color"] = {"mode": "thresholds"}


y = 0
stat("Queries / s", "Every DNS message answered, all transports.", 0, y,
     f'sum(rate(gslbd_responses_total{{{SEL}}}[$__rate_interval]))', "reqps")
stat("Services down", "Checked services whose health is down now.", 4, y,
     f'count(gslbd_service_up{{{SEL}}} == 0) or vector(0)', "short",
     {"mode": "absolute", "steps": [{"color": "green", "value": None}, {"color": "red", "value": 1}]})
stat("Sites down", "Sites whose every checked service is down.", 8, y,
     f'count(gslbd_site_up{{{SEL}}} == 0) or vector(0)', "short",
     {"mode": "absolute", "steps": [{"color": "green", "value": None}, {"color": "red", "value": 1}]})
stat("Drained", "Sites and services taken out by an operator (drain).", 12, y,
     f'(count(gslbd_site_enabled{{{SEL}}} == 0) or vector(0)) + (count(gslbd_service_enabled{{{SEL}}} == 0) or vector(0))',
     "short", {"mode": "absolute", "steps": [{"color": "green", "value": None}, {"color": "orange", "value": 1}]})
stat("Fallback answers / s", "Answers given by the all-down fallback: nothing healthy was left.", 16, y,
     f'sum(rate(gslbd_hostname_fallbacks_total{{{HSEL}}}[$__rate_interval])) or vector(0)', "reqps",
     {"mode": "absolute", "steps": [{"color": "green", "value": None}, {"color": "red", "value": 0.001}]})
stat("Failed reloads (range)", "Reloads that failed in the dashboard's time range; the old config kept serving.",
     20, y, f'sum(increase(gslbd_reloads_total{{{SEL},result="failed"}}[$__range])) or vector(0)', "short",
     {"mode": "absolute", "steps": [{"color": "green", "value": None}, {"color": "red", "value": 1}]})
y += 4

row("Traffic", y)
y += 1
panel("timeseries", "QPS by rcode", "Responses per second by RCODE (NOERROR, NXDOMAIN, REFUSED, …).", 0, y, 12, 8,
      [(f'sum by (rcode) (rate(gslbd_responses_total{{{SEL}}}[$__rate_interval]))', "{{rcode}}")], "reqps")
panel("timeseries", "Queries by transport and type", "DNS messages received per second.", 12, y, 12, 8,
      [(f'sum by (transport) (rate(gslbd_queries_total{{{SEL}}}[$__rate_interval]))', "{{transport}}", "A"),
       (f'sum by (qtype) (rate(gslbd_queries_by_type_total{{{SEL}}}[$__rate_interval]))', "{{qtype}}", "B")], "reqps")
y += 8
panel("timeseries", "Answers per site", "GSLB answers per second that carried an address of each site.", 0, y, 12, 8,
      [(f'sum by (site) (rate(gslbd_hostname_site_answers_total{{{HSEL}}}[$__rate_interval]))', "{{site}}")],
      "reqps", stack=True)
panel("timeseries", "Share of answers per site", "Each site's share of the GSLB answers.", 12, y, 12, 8,
      [(f'sum by (site) (rate(gslbd_hostname_site_answers_total{{{HSEL}}}[$__rate_interval]))', "{{site}}")],
      "percentunit", stack=True, percent=True)
y += 8
panel("timeseries", "Answers per service", "GSLB answers per second by (site, address).", 0, y, 12, 8,
      [(f'sum by (site, address) (rate(gslbd_hostname_answers_total{{{HSEL}}}[$__rate_interval]))',
        "{{site}} {{address}}")], "reqps", stack=True)
panel("timeseries", "Fallback answers", "Answers the all-down fallback gave, per hostname and fallback kind.",
      12, y, 12, 8,
      [(f'sum by (hostname, fallback) (rate(gslbd_hostname_fallbacks_total{{{HSEL}}}[$__rate_interval]))',
        "{{hostname}} {{fallback}}")], "reqps")
y += 8

row("Health", y)
y += 1
panel("state-timeline", "Service health", "1 up, 0 down, per checked service.", 0, y, 12, 9,
      [(f'max by (site, address) (gslbd_service_up{{{SEL}}})', "{{site}} {{address}}")], extra=UPDOWN)
panel("state-timeline", "Site health and admin state", "Site up (some service up) and enabled (not drained).",
      12, y, 12, 9,
      [(f'max by (site) (gslbd_site_up{{{SEL}}})', "{{site}} up", "A"),
       (f'max by (site) (gslbd_site_enabled{{{SEL}}})', "{{site}} enabled", "B")], extra=UPDOWN)
y += 9
panel("timeseries", "Flaps", "Up/down changes per service in each 5 minutes.", 0, y, 12, 8,
      [(f'sum by (site, address) (increase(gslbd_check_state_changes_total{{{SEL}}}[5m]))', "{{site}} {{address}}")],
      "short")
panel("timeseries", "Check failures / s", "Failed health checks per second (timeouts, refused, bad status).",
      12, y, 12, 8,
      [(f'sum by (site, address) (rate(gslbd_check_results_total{{{SEL},result="failure"}}[$__rate_interval]))',
        "{{site}} {{address}}")], "ops")
y += 8
panel("timeseries", "Check latency (p50 / p95 / p99)", "Health-check duration from the histogram, by site.",
      0, y, 12, 8,
      [(f'histogram_quantile(0.5, sum by (le, site) (rate(gslbd_check_duration_seconds_bucket{{{SEL}}}[$__rate_interval])))', "{{site}} p50", "A"),
       (f'histogram_quantile(0.95, sum by (le, site) (rate(gslbd_check_duration_seconds_bucket{{{SEL}}}[$__rate_interval])))', "{{site}} p95", "B"),
       (f'histogram_quantile(0.99, sum by (le, site) (rate(gslbd_check_duration_seconds_bucket{{{SEL}}}[$__rate_interval])))', "{{site}} p99", "C")],
      "s")
panel("timeseries", "FlashBack times", "Smoothed L4 (connect) and L7 (response) times the flashback stage compares.",
      12, y, 12, 8,
      [(f'max by (site, address, layer) (gslbd_service_flashback_seconds{{{SEL}}})', "{{site}} {{address}} {{layer}}")],
      "s")
y += 8

row("Metric sources", y)
y += 1
panel("state-timeline", "Scrape state", "1 when the source's last scrape succeeded, per metric source.", 0, y, 12, 8,
      [(f'max by (source) (gslbd_source_up{{{SEL}}})', "{{source}}")], extra=UPDOWN)
panel("timeseries", "Scrapes by result", "Scrapes per second of each metric source, by result.", 12, y, 12, 8,
      [(f'sum by (source, result) (rate(gslbd_source_scrapes_total{{{SEL}}}[$__rate_interval]))',
        "{{source}} {{result}}")], "ops")
y += 8
panel("timeseries", "Report and scrape age", "Age of each site's metrics: older than max_age counts as unknown.",
      0, y, 12, 8,
      [(f'max by (site) (gslbd_site_report_age_seconds{{{SEL}}})', "{{site}}")], "s")
panel("timeseries", "Site CPU", "The CPU each site's load balancer reported or was scraped for.", 12, y, 12, 8,
      [(f'max by (site) (gslbd_site_cpu_percent{{{SEL}}})', "{{site}}")], "percent")
y += 8

row("Operations", y)
y += 1
panel("timeseries", "Reloads", "Reloads per 5 minutes, by result.", 0, y, 12, 7,
      [(f'sum by (result) (increase(gslbd_reloads_total{{{SEL}}}[5m]))', "{{result}}")], "short")
panel("timeseries", "Zone serials", "SOA serial of each served zone (a step is a new zone version).", 12, y, 12, 7,
      [(f'max by (zone) (gslbd_zone_serial{{{SEL}}})', "{{zone}}")], "none")

dashboard = {
    "__inputs": [],
    "__requires": [{"type": "grafana", "id": "grafana", "name": "Grafana", "version": "9.0.0"},
                   {"type": "datasource", "id": "prometheus", "name": "Prometheus", "version": "1.0.0"}],
    "title": "gslbd",
    "uid": "gslbd-overview",
    "description": "gslbd, the authoritative GSLB DNS server: traffic, answers per site, health, checks, sources, reloads.",
    "tags": ["gslbd", "dns", "gslb"],
    "timezone": "utc",
    "editable": True,
    "graphTooltip": 1,
    "schemaVersion": 38,
    "version": 1,
    "refresh": "10s",
    "time": {"from": "now-1h", "to": "now"},
    "timepicker": {},
    "annotations": {"list": [{"builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"},
                              "enable": True, "hide": True, "iconColor": "rgba(0, 211, 255, 1)",
                              "name": "Annotations & Alerts", "type": "dashboard"}]},
    "links": [],
    "templating": {"list": [
        {"name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus",
         "current": {}, "hide": 0, "refresh": 1, "options": [], "regex": ""},
        {"name": "instance", "label": "gslbd instance", "type": "query", "datasource": DS,
         "query": {"query": "label_values(gslbd_queries_total, instance)", "refId": "instance"},
         "definition": "label_values(gslbd_queries_total, instance)",
         "includeAll": True, "multi": True, "allValue": ".*", "current": {}, "refresh": 2, "sort": 1,
         "hide": 0, "options": [], "regex": ""},
        {"name": "hostname", "label": "GSLB hostname", "type": "query", "datasource": DS,
         "query": {"query": "label_values(gslbd_hostname_answers_total, hostname)", "refId": "hostname"},
         "definition": "label_values(gslbd_hostname_answers_total, hostname)",
         "includeAll": True, "multi": True, "allValue": ".*", "current": {}, "refresh": 2, "sort": 1,
         "hide": 0, "options": [], "regex": ""},
    ]},
    "panels": panels,
}
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gslbd.json")
with open(out, "w") as f:
    json.dump(dashboard, f, indent=2)
    f.write("\n")
print(out)
