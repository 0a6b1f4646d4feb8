// GET /v1/explain: one simulated query against the live state (server/control/explain.hpp), as JSON or, with
// format=text, as the readable text gslbctl explain prints.
#include "server/control/api.hpp"
#include "server/control/explain.hpp"

namespace gslb::server {

ApiResponse ControlApi::explainQuery(const Snapshot& s, const std::string& path) {
    ExplainRequest req;
    bool text = false;
    for (const auto& [k, v] : queryParams(path)) {
        if (k == "name")
            req.name = v;
        else if (k == "type")
            req.type = v;
        else if (k == "client")
            req.client = v;
        else if (k == "ecs")
            req.ecs = v;
        else if (k == "format" && (v == "text" || v == "json"))
            text = v == "text";
        else
            return apiError(400,
                            "unknown parameter \"" + k + "\" (name, type, client, ecs, format=json|text)");
    }
    nlohmann::json j;
    std::string error;
    if (!explain(s, req, j, error)) return apiError(400, error);
    if (text) return ApiResponse{200, explainText(j), "text/plain; charset=utf-8"};
    return ApiResponse{200, j.dump(2) + "\n"};
}

}  // namespace gslb::server
