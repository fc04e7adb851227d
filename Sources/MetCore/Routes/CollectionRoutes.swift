import MetEngine

/// `/objects/{id}`, `/objects?ids=…` and `/departments`: the collection's records, through the
/// cache.
enum CollectionRoutes {
    private static let objectParameters: Set<String> = ["fields"]

    /// `GET /objects/{id}`: one record, `fields=` projecting its top-level members.
    static let object = RouteEntry(.segment(prefix: "/objects/"), label: .object) { request, services throws(Problem) in
        try request.target.allowOnly(objectParameters)
        let id = try ObjectID.parse(request.segment)
        let fields = try request.target.value(of: "fields").map { (text) throws(Problem) in
            try FieldList(parsing: text).names
        }
        return services.start(
            ResourcePipeline(
                resource: .object(id: id), presentation: request.presentation(fields: fields, object: request.segment),
                presenter: services.presenter),
            for: request)
    }

    /// `GET /objects?ids=…`: up to 100 records at once, with a wait.
    static let objectBatch = RouteEntry(.exact(["/objects"]), label: .objects) { request, services throws(Problem) in
        services.start(
            BatchPipeline(
                batch: try ObjectBatch(request.target), presentation: request.presentation(),
                presenter: services.presenter, renders: services.batchRenders),
            for: request)
    }

    /// `GET /departments`.
    static let departments = RouteEntry(.exact(["/departments"]), label: .departments) {
        request, services throws(Problem) in
        try request.target.allowOnly([])
        return services.start(
            ResourcePipeline(
                resource: .departments, presentation: request.presentation(), presenter: services.presenter),
            for: request)
    }
}
