import Foundation

/// When and as what a request arrived.
struct RequestStart {
    /// `DispatchTime` nanoseconds, for durations.
    let uptime: UInt64
    /// Seconds since 1970, for the access log.
    let time: Double
    let requestID: String

    /// Seconds since the request arrived.
    var elapsed: Double {
        Double(DispatchTime.now().uptimeNanoseconds &- uptime) / 1e9
    }
}
