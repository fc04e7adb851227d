import HTTPWire
import MetCore

extension RequestHead {
    /// The request the core sees: this head's method, target and fields, with `body`.
    func request(body: [UInt8]) -> Request {
        var headers = HTTPFields(capacity: fields.count)
        for field in fields { headers.append(field.name, field.value) }
        return Request(method: method, target: target, headers: headers, body: body)
    }
}
