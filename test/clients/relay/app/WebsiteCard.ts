// One website of the list, which the page refetches on its own (useRefetchableFragment's documents).
import { graphql } from 'relay-runtime';

export const websiteCardFragment = graphql`
  fragment WebsiteCard_website on Website @refetchable(queryName: "WebsiteCardRefetchQuery") {
    id
    domain
    favorite
    visitors: stats(name: VISITOR, period: LAST_7_DAYS) {
      totalCount
    }
  }
`;
