import HTTPGrammar
import HTTPWire
import MetEngine

extension RequestHead {
    /// The request the core sees: this head's method, target and fields, with `body`, from `peer`.
    func request(body: [UInt8], peer: RequestPeer) -> Request {
        var headers = HTTPFields(capacity: fields.count)
        for field in fields { headers.append(field.name, field.value) }
        var request = Request(method: method, target: target, headers: headers, body: body)
        request.peer = peer
        return request
    }

    /// The first value of the field `name` (case-insensitive), or nil.
    func field(named name: String) -> String? {
        fields.first { Grammar.equalsIgnoringCase($0.name.utf8, name.utf8) }?.value
    }
}
