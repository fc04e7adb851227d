import MetEngine

/// What the connection tests serve, against the core's `Responder`: `respond(to:)` on the loop
/// thread, ready or suspended. By target:
/// - `/slow`: suspended; running the suspension fires `slowArrived`, then answers 200 `slow` once
///   the test fires `releaseSlow`.
/// - `/big`: 200 with `bigBody`, ready; fires `bigServed`.
/// - anything else: 200 with the target as the body, ready.
final class TestResponder: Responder {
    /// The body of `/big`: more than the socket and the output high-water mark take at once.
    static let bigBody = [UInt8](repeating: UInt8(ascii: "b"), count: 1 << 20)

    let slowArrived = Signal()
    let releaseSlow = Signal()
    let bigServed = Signal()
    private let seen = Locked<[String]>([])

    /// The targets of the requests the loop handed over so far, in order.
    var targets: [String] { seen.withLock { $0 } }

    func respond(to request: Request) -> Answer {
        seen.withLock { $0.append(request.target) }
        switch request.target {
        case "/slow":
            return .suspended(
                Suspension { [slowArrived, releaseSlow] in
                    slowArrived.fire()
                    await releaseSlow.wait()
                    return Response(status: 200, body: Array("slow".utf8))
                })
        case "/big":
            bigServed.fire()
            return .ready(Response(status: 200, body: Self.bigBody))
        default:
            return .ready(Response(status: 200, body: Array(request.target.utf8)))
        }
    }
}
