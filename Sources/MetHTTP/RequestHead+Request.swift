import HTTPGrammar
import HTTPWire
import MetEngine

extension RequestHead {
    /// The request the core sees: this head's method, target and fields, with `body`, from `peer`,
    /// known as `requestID`.
    package func request(body: [UInt8], peer: RequestPeer, requestID: String? = nil) -> Request {
        var headers = HTTPFields(capacity: fields.count)
        for field in fields { headers.append(field.name, field.value) }
        return Request(method: method, target: target, headers: headers, body: body, peer: peer, requestID: requestID)
    }

    /// The first value of the field `name` (case-insensitive), or nil.
    func field(named name: String) -> String? {
        fields.first { Grammar.equalsIgnoringCase($0.name.utf8, name.utf8) }?.value
    }
}
