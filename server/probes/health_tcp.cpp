// The `tcp` health check: up when a TCP connection to the target opens within the timeout; its time is the
// L4 (connect) FlashBack time. The connection is closed at once.
#include "server/probes/health_check.hpp"

namespace gslb::server::health {

namespace {

class TcpCheck final : public CheckRun {
  public:
    TcpCheck(event_base* base, const CheckSpec& spec, Done done) : CheckRun(base, spec, std::move(done)) {}

  private:
    void connected() override { succeed("tcp connect"); }
};

}  // namespace

std::unique_ptr<CheckRun> makeTcpCheck(event_base* base, const CheckSpec& spec, CheckRun::Done done) {
    return std::unique_ptr<CheckRun>(new TcpCheck(base, spec, std::move(done)));
}

}  // namespace gslb::server::health
