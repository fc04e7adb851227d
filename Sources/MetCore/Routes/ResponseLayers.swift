import MetEngine

/// What the response layers know of the request an answer is for.
struct ResponseContext: Sendable {
    let requestID: String?
    /// The request's fields (the CORS layer reads `Origin`); only `Origin`, if any, for an answer
    /// the HTTP layer made itself.
    let headers: HTTPFields
    /// How `/metrics` labels the route.
    let route: MetricRoute
    /// The client behind a trusted proxy, for the access log; nil when the peer is the client.
    let clientAddress: String?
}

/// One step every answer passes once it is made, whichever route made it. In place: a layer
/// that copied the response would retain every one of its buffers on each hit.
protocol ResponseLayer: Sendable {
    func finish(_ response: inout Response, _ context: ResponseContext)
}

/// The ordered list of response layers: every answer passes each once, in order, now or when its
/// suspension ends; so does an answer the HTTP layer made itself (`Responder.unread`).
struct ResponseLayers: Sendable {
    let layers: [any ResponseLayer]

    /// `answer` through every layer.
    func wrap(_ answer: consuming Answer, _ context: ResponseContext) -> Answer {
        switch consume answer {
        case .ready(let response): .ready(finish(response, context))
        case .suspended(let suspension): .suspended(suspension.map { [self] in finish($0, context) })
        }
    }

    /// `response` through every layer.
    func finish(_ response: consuming Response, _ context: ResponseContext) -> Response {
        // By index: a `for … in` would copy each layer out of the array first.
        for index in layers.indices { layers[index].finish(&response, context) }
        return response
    }
}

/// Marks each answer with what `/metrics` and the access log read: its route's label and the
/// client behind a trusted proxy.
struct AccountingLayer: ResponseLayer {
    func finish(_ response: inout Response, _ context: ResponseContext) {
        response.route = context.route
        response.clientAddress = context.clientAddress
    }
}

/// Adds the request's ID to every problem document (`Problem.identified`).
struct RequestIDLayer: ResponseLayer {
    func finish(_ response: inout Response, _ context: ResponseContext) {
        guard response.status >= 400 else { return }  // Not a problem: left as it is, uncopied.
        response = Problem.identified(response, requestID: context.requestID)
    }
}
