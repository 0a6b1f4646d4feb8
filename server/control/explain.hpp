// Explain (doc/design.md "Client-aware answers"): one simulated query against the live state, stage by stage
// — what each stage received, the value it read for each candidate (with the value's age), the bar it set,
// what it dropped and why — then the chooser's pick, any fallback, and the answer with the ECS scope it would
// carry. Runs on the control thread with its own copies of everything: the query path has no trace hooks and
// pays nothing for it.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "server/state/snapshot.hpp"

namespace gslb::server {

struct ExplainRequest {
    std::string name;        // the QNAME ("www.gslb.example.com." or without the final dot)
    std::string type = "A";  // A or AAAA (anything else: answered from the zone)
    std::string client;      // the query's source address; empty: unknown
    std::string ecs;         // an ECS prefix "198.51.100.0/24" (or an address: /32, /128); empty: none
};

/// The explanation as JSON (shape in doc/api.md "Explain"). False and `error` for a bad request (an
/// unparsable client or ECS, an unknown type); a name outside our zones is explained as REFUSED.
bool explain(const Snapshot& snap, const ExplainRequest& req, nlohmann::json& out, std::string& error);

/// The same as readable text, one stage per paragraph (gslbctl explain prints it).
std::string explainText(const nlohmann::json& j);

}  // namespace gslb::server
